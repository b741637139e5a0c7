// Retry bounds shared by every workflow: no workflow of ours gives up
// because a dependency is away for less than OutageTolerance.

package workflows

import (
	"math"
	"time"
)

// OutageTolerance is how long an activity keeps retrying a dependency that
// is away (PostgreSQL, a worker with the right WEBHOOK_SECRET_KEY) before
// its workflow gives up: a month, so no outage an operator would fix makes
// an accepted event undeliverable.
const OutageTolerance = 30 * 24 * time.Hour

// untilScheduleToClose leaves the schedule-to-close as the only bound on
// retries. It equals "unlimited" in production; written out, it also keeps
// the SDK's test environment (which turns an unlimited count into 10)
// exercising the real policy.
const untilScheduleToClose = math.MaxInt32
