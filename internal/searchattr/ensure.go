package searchattr

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// ensureRounds bounds how often Ensure lists and adds again after losing
// a race to another replica.
const ensureRounds = 3

// Ensure registers the custom search attributes missing in namespace
// through the operator service. It is idempotent, so every worker start
// calls it: it lists what the namespace has and adds only the rest.
// Replicas starting together may race; the loser's add fails with
// AlreadyExists (Elasticsearch) or Unavailable (SQL visibility: the alias
// was allocated meanwhile), and it lists again to see the winner's work.
// An attribute of the same name but another type is an error an operator
// must resolve. On Temporal Cloud, where workers may not call the operator
// service, the attributes are created with tcld or the Cloud UI instead,
// and this then finds nothing missing.
func Ensure(ctx context.Context, c client.Client, namespace string) error {
	var err error
	for range ensureRounds {
		var missing map[string]enumspb.IndexedValueType
		missing, err = missingIn(ctx, c, namespace)
		if err != nil || len(missing) == 0 {
			return err
		}
		_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace: namespace, SearchAttributes: missing,
		})
		var exists *serviceerror.AlreadyExists
		var unavailable *serviceerror.Unavailable
		switch {
		case err == nil:
			return nil
		case errors.As(err, &exists), errors.As(err, &unavailable):
			if ctx.Err() != nil {
				return err
			}
			continue // another replica may have added them: look again
		default:
			return fmt.Errorf("add search attributes %s: %w", names(missing), err)
		}
	}
	return fmt.Errorf("add search attributes: %w", err)
}

// missingIn lists the namespace's custom attributes and returns ours that
// it lacks; one it has under another type is an error.
func missingIn(ctx context.Context, c client.Client, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes: %w", err)
	}
	have := resp.GetCustomAttributes()
	missing := map[string]enumspb.IndexedValueType{}
	for name, want := range Types() {
		got, ok := have[name]
		switch {
		case !ok:
			missing[name] = want
		case got != want:
			return nil, fmt.Errorf("search attribute %s is registered in namespace %s as %s, not %s: remove it or rename ours",
				name, namespace, got, want)
		}
	}
	return missing, nil
}

func names(m map[string]enumspb.IndexedValueType) string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
