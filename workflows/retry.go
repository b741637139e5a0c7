package workflows

import (
	"math"
	"time"
)

// OutageTolerance is how long an activity retries a dependency that is away
// (PostgreSQL, a worker with the right WEBHOOK_SECRET_KEY): a month, so no
// outage an operator would fix makes an accepted event undeliverable.
const OutageTolerance = 30 * 24 * time.Hour

// untilScheduleToClose means unlimited attempts; written out because the
// SDK's test environment turns an unlimited count into 10.
const untilScheduleToClose = math.MaxInt32
