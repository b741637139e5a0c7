package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// startOrBare makes a start (or signal-with-start) with each of tries in
// turn, going on to the next only while the server refuses the request as
// invalid, and after the last once more without search attributes.
//
// Search attributes are for operators and never a condition of what a
// workflow does, so a namespace that does not define them (Temporal Cloud,
// where workers may not register them; a namespace made by hand; the
// seconds after a worker registered them, until the server's namespace
// cache sees them) must not stop a delivery, a key's lifecycle, a
// rotation or a recovery. A refused request started nothing and delivered
// no signal, so nothing is sent twice. bare reports the start without
// attributes, for the caller to log; when it fails too, the error keeps
// why the last start with them did.
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

// startWithoutAttributesError keeps both reasons when the start without
// search attributes fails as well as the one with them.
func startWithoutAttributesError(first, err error) error {
	return fmt.Errorf("start without search attributes (with them: %v): %w", first, err)
}

// isInvalid: the server refused the start's request itself. Search
// attributes (undefined, or a value too large) are what this code expects,
// but InvalidArgument also covers an oversize memo or input, or a signal
// over its limits; retrying without attributes is harmless then: nothing
// was started, and the same error comes back, wrapped with the first.
func isInvalid(err error) bool {
	var invalid *serviceerror.InvalidArgument
	return errors.As(err, &invalid)
}
