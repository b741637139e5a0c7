package models_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// However many problems a request has, the error lists a bounded number,
// and says how many it left out.
func TestValidationCapsDetails(t *testing.T) {
	var v models.Validation
	for i := range 1000 {
		v.Add("f"+strconv.Itoa(i), "bad")
	}
	var me *models.Error
	if !errors.As(v.Err(), &me) || !errors.Is(me, models.ErrInvalid) {
		t.Fatalf("err = %v, want a *models.Error of kind ErrInvalid", v.Err())
	}
	if len(me.Details) != 20 {
		t.Errorf("%d details, want 20", len(me.Details))
	}
	if !strings.HasSuffix(me.Message, "and 980 more") || strings.Contains(me.Message, "f20:") {
		t.Errorf("message %q, want the first 20 problems and a count of the rest", me.Message)
	}
}

func TestValidationWithoutProblemsIsNil(t *testing.T) {
	var v models.Validation
	if err := v.Err(); err != nil {
		t.Fatalf("err = %v, want nil", err)
	}
}
