package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// startOrBare starts with each of tries in turn while the server refuses the
// request as invalid, then once more without search attributes: they serve
// operators only, and a namespace may lack them (Temporal Cloud, a cache not
// yet updated). A refused request delivered nothing, so nothing is sent twice.
func startOrBare(start func(client.StartWorkflowOptions) error, tries ...client.StartWorkflowOptions) (bare bool, err error) {
	var refused error
	for _, opts := range tries {
		if err = start(opts); !isInvalid(err) {
			return false, err
		}
		refused = err
	}
	opts := tries[len(tries)-1]
	opts.TypedSearchAttributes = temporal.SearchAttributes{}
	if err = start(opts); err != nil {
		return false, startWithoutAttributesError(refused, err)
	}
	return true, nil
}

func startWithoutAttributesError(first, err error) error {
	return fmt.Errorf("start without search attributes (with them: %v): %w", first, err)
}

// isInvalid reports a request the server refused. InvalidArgument also covers
// an oversize memo, input or signal; the retry then just fails the same way.
func isInvalid(err error) bool {
	var invalid *serviceerror.InvalidArgument
	return errors.As(err, &invalid)
}
