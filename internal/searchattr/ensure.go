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

// ensureRounds bounds Ensure's retries after losing a race to another replica.
const ensureRounds = 3

// Ensure registers the custom search attributes missing in namespace; it is
// idempotent, so every worker start calls it. A replica losing a race gets
// AlreadyExists, or Unavailable under SQL visibility, and lists again. On
// Temporal Cloud create them with tcld; Ensure then finds none missing.
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

// missingIn returns our attributes the namespace lacks; a type clash is an error.
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
