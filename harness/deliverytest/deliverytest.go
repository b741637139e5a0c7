// Package deliverytest is the fixture the webhook delivery tests of the
// activities and workflows packages share: a migrated database of their
// own (harness/pgtest) holding a workspace, the real activities with a
// key ring, subscriptions with sealed signing secrets, stored events, and
// real HTTP receivers on loopback. Test binaries that use it run
// pgtest.Main from their TestMain.
package deliverytest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// EventType is the type Subscribe subscribes to and Publish publishes.
const EventType = models.EventTestCreated

// Fixture is a workspace in a fresh database and the activities that
// deliver its events.
type Fixture struct {
	Store     *store.Store
	Workspace store.Credentials
	// Key is the only key of Box, the ring the activities open secrets with.
	Key  []byte
	Box  *secret.Box
	Acts *activities.Activities
	Ctx  context.Context
}

// New bootstraps a workspace in a database of t's own. allowPrivate lets
// the activities' webhook client reach loopback receivers.
func New(t testing.TB, allowPrivate bool) *Fixture {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	ws, err := st.Bootstrap(context.Background(), "W", "a-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	return &Fixture{Store: st, Workspace: ws, Key: key, Box: box, Ctx: context.Background(), Acts: &activities.Activities{
		Store: st, WebhookClient: activities.NewWebhookClient(allowPrivate), WebhookSecrets: box,
	}}
}

// Subscribe creates an enabled subscription of url to EventType and
// returns it with its signing secret.
func (f *Fixture) Subscribe(t testing.TB, url string) (models.WebhookSubscription, string) {
	t.Helper()
	return f.SubscribeWithID(t, uuid.New(), url)
}

// SubscribeWithID is Subscribe with the subscription's id chosen.
func (f *Fixture) SubscribeWithID(t testing.TB, id uuid.UUID, url string) (models.WebhookSubscription, string) {
	t.Helper()
	whsec, err := secret.NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := f.Box.Seal([]byte(whsec), id[:])
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.Store.Webhooks().Create(f.Ctx, id, models.NewWebhook{
		WorkspaceID: f.Workspace.WorkspaceID, CreatorID: f.Workspace.UserID, URL: url,
		EventTypes: []models.EventType{EventType}, Enabled: true,
	}, sealed, 0)
	if err != nil {
		t.Fatal(err)
	}
	return w, whsec
}

// Publish stores an event of EventType with data (JSON), its recipients
// fixed as the API fixes them.
func (f *Fixture) Publish(t testing.TB, data string) models.Event {
	t.Helper()
	ev, err := f.Store.Events().Create(f.Ctx, models.NewEvent{
		WorkspaceID: f.Workspace.WorkspaceID, Type: EventType, Data: json.RawMessage(data),
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// Records are a subscription's delivery records, oldest attempt first.
func (f *Fixture) Records(t testing.TB, subID uuid.UUID) []models.WebhookDelivery {
	t.Helper()
	page, err := f.Store.Deliveries().List(f.Ctx, f.Workspace.WorkspaceID, subID, models.PageRequest{Page: 1, PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]models.WebhookDelivery, len(page.Items))
	for i, r := range page.Items {
		out[len(out)-1-i] = r
	}
	return out
}
