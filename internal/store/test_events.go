package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

var errTestDisabled = models.Conflict("webhook_disabled",
	`this webhook subscription is disabled, so nothing is delivered to it; enable it (PUT {"enabled": true}) first`)

// createTestSQL checks the subscription and inserts in one statement (one
// snapshot), so the event is accepted exactly when it was enabled.
const createTestSQL = `WITH s AS (
		SELECT id, enabled FROM webhook_subscriptions WHERE id = ?0 AND workspace_id = ?1
	), ins AS (
		INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT ?2::uuid, ?1::uuid, ?3, ?4::jsonb, ?5::timestamptz, ARRAY[s.id] FROM s WHERE s.enabled
		RETURNING id
	)
	SELECT (SELECT enabled FROM s) AS enabled, (SELECT id FROM ins) AS id`

// CreateTest stores a webhook.test event for one subscription of the
// workspace, whatever types it takes; a disabled one is a conflict.
func (e Events) CreateTest(ctx context.Context, workspaceID, subscriptionID uuid.UUID, data json.RawMessage) (models.Event, error) {
	ev := models.Event{
		ID: uuid.New(), WorkspaceID: workspaceID, Type: models.EventWebhookTest, Data: data,
		DateCreated: pgTime(time.Now()), Recipients: []uuid.UUID{subscriptionID},
	}
	var row struct {
		Enabled *bool      `bun:"enabled"`
		ID      *uuid.UUID `bun:"id"`
	}
	err := e.db.NewRaw(createTestSQL, subscriptionID, workspaceID, ev.ID, string(ev.Type), string(data), ev.DateCreated).Scan(ctx, &row)
	switch {
	case err != nil:
		if bad := invalidJSONB(err); bad != nil {
			return models.Event{}, bad
		}
		return models.Event{}, translate(err, nil)
	case row.Enabled == nil:
		return models.Event{}, models.NotFound("webhook subscription")
	case !*row.Enabled:
		return models.Event{}, errTestDisabled
	}
	return ev, nil
}
