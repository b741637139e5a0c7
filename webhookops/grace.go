package webhookops

import (
	"math"
	"strconv"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// GracePeriod checks a rotation's grace period, given in whole hours or
// whole seconds, not both; neither is the default (24 hours).
func GracePeriod(hours, seconds *float64) (time.Duration, error) {
	var v models.Validation
	grace := models.WebhookSecretGraceDefault
	switch {
	case hours != nil && seconds != nil:
		v.Add("gracePeriodSeconds", "send either gracePeriodHours or gracePeriodSeconds, not both")
	case hours != nil:
		grace = time.Duration(graceUnits(*hours, "gracePeriodHours", time.Hour, &v)) * time.Hour
	case seconds != nil:
		grace = time.Duration(graceUnits(*seconds, "gracePeriodSeconds", time.Second, &v)) * time.Second
	}
	return grace, v.Err()
}

// graceUnits checks a whole number of units up to the maximum grace period.
func graceUnits(x float64, field string, unit time.Duration, v *models.Validation) int64 {
	hi := int64(models.WebhookSecretGraceMax / unit)
	if x < 0 || x > float64(hi) || x != math.Trunc(x) {
		v.Add(field, "must be a whole number from 0 to "+strconv.FormatInt(hi, 10)+
			" (the grace period is at most 7 days; 0 stops the old secret at once)")
		return 0
	}
	return int64(x)
}
