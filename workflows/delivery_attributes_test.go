package workflows_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// upserts records the search attributes a workflow upserts.
type upserts struct {
	mu      sync.Mutex
	outcome []string
	subs    [][]string
}

func watchUpserts(env *testsuite.TestWorkflowEnvironment) *upserts {
	u := &upserts{}
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		u.mu.Lock()
		defer u.mu.Unlock()
		if v, ok := sa.GetKeyword(searchattr.Outcome); ok {
			u.outcome = append(u.outcome, v)
		}
		if v, ok := sa.GetKeywordList(searchattr.SubscriptionIDs); ok {
			u.subs = append(u.subs, v)
		}
	}).Return(nil)
	return u
}

// The Outcome search attribute is set once, as the delivery ends, to the
// worst of its recipients' outcomes, and the result reports the same.
func TestDeliveryOutcomeAttribute(t *testing.T) {
	for _, c := range []struct {
		name     string
		statuses [][]int // one receiver per list; nil: a deleted subscription
		want     workflows.Outcome
	}{
		{"delivered", [][]int{{200}}, workflows.OutcomeDelivered},
		{"all delivered after retries", [][]int{{500, 204}, {200}}, workflows.OutcomeDelivered},
		{"one exhausted", [][]int{{200}, {500}}, workflows.OutcomeExhausted},
		{"gone", [][]int{{410}}, workflows.OutcomeGone},
		{"gone beside delivered", [][]int{{200}, {410}}, workflows.OutcomeGone},
		{"exhausted beats gone", [][]int{{410}, {503}}, workflows.OutcomeExhausted},
		{"skipped", [][]int{nil}, workflows.OutcomeSkipped},
		{"skipped beside delivered", [][]int{{200}, nil}, workflows.OutcomeSkipped},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newDeliveryFixture(t)
			var deleted []uuid.UUID
			for _, statuses := range c.statuses {
				if statuses == nil {
					sub, _ := f.Subscribe(t, "https://hooks.example.com/gone")
					deleted = append(deleted, sub.ID)
					continue
				}
				f.Subscribe(t, newReceiver(t, statuses...).URL)
			}
			ev := f.publish(t)
			for _, id := range deleted {
				if err := f.Store.Webhooks().Delete(f.Ctx, f.Workspace.WorkspaceID, id); err != nil {
					t.Fatal(err)
				}
			}
			env := f.newEnv()
			startedLikeTheOutbox(t, env, ev)
			u := watchUpserts(env)
			res, _ := f.run(t, env, ev, []time.Duration{time.Second})
			if res.Outcome != c.want {
				t.Errorf("result outcome %q, want %q (%+v)", res.Outcome, c.want, res.Subscriptions)
			}
			if !slices.Equal(u.outcome, []string{string(c.want)}) {
				t.Errorf("Outcome upserts %v, want [%s]", u.outcome, c.want)
			}
			if len(u.subs) != 0 {
				t.Errorf("SubscriptionIds upserted %v: the start sets them", u.subs)
			}
		})
	}
}

// A workflow started without search attributes (StartDelivery's last
// resort on a namespace that lacks them) sets none: on such a namespace
// the server would fail its workflow task on every retry.
// (TestDeliveryWithoutSearchAttributesInTheNamespace shows that on a real
// server.)
func TestDeliveryStartedWithoutAttributesSetsNone(t *testing.T) {
	f := newDeliveryFixture(t)
	f.Subscribe(t, newReceiver(t, http.StatusOK).URL)
	ev := f.publish(t)
	env := f.newEnv()
	u := watchUpserts(env)
	res, _ := f.run(t, env, ev, defaultSchedule)
	if res.Outcome != workflows.OutcomeDelivered {
		t.Fatalf("result %+v", res)
	}
	if len(u.outcome) != 0 || len(u.subs) != 0 {
		t.Fatalf("upserted Outcome %v, SubscriptionIds %v", u.outcome, u.subs)
	}
}

// startedLikeTheOutbox gives env the search attributes StartDelivery
// starts ev's workflow with.
func startedLikeTheOutbox(t *testing.T, env *testsuite.TestWorkflowEnvironment, ev models.Event) {
	t.Helper()
	if err := env.SetTypedSearchAttributesOnStart(workflows.DeliveryStartOptions(ev, "q", 0).TypedSearchAttributes); err != nil {
		t.Fatal(err)
	}
}
