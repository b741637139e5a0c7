package store

import (
	"context"

	"github.com/openlayer-ai/workspace-service/models"
)

// windowCount receives the `count(*) OVER () AS total` of a page query's rows.
type windowCount struct {
	Total int `bun:"total,scanonly"`
}

func (w windowCount) total() int { return w.Total }

// finishPage turns a page query's rows into the pagination envelope. Past
// the last page no row carries the total, so count runs instead.
func finishPage[R interface{ total() int }, T any](ctx context.Context, req models.PageRequest, rows []R,
	model func(R) T, count func(context.Context) (int, error),
) (models.Page[T], error) {
	items := make([]T, len(rows))
	for i, r := range rows {
		items[i] = model(r)
	}
	n := 0
	if len(rows) > 0 {
		n = rows[0].total()
	} else if req.Page > 1 {
		var err error
		if n, err = count(ctx); err != nil {
			return models.Page[T]{}, translate(err, nil)
		}
	}
	return models.NewPage(req, n, items), nil
}
