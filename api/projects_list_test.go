package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// insertProject writes a project row directly, so tests control its
// creation time (the API always stamps now).
func (h *harness) insertProject(ws uuid.UUID, name string, tt models.TaskType, created time.Time) uuid.UUID {
	h.t.Helper()
	id := uuid.New()
	h.exec(`INSERT INTO projects (id, workspace_id, name, task_type, source, date_created, date_updated)
		VALUES (?, ?, ?, ?, 'web', ?, ?)`, id, ws, name, string(tt), created, created)
	return id
}

// listPage fetches one page of projects with the admin key.
func (h *harness) listPage(query string) models.Page[models.Project] {
	h.t.Helper()
	var p models.Page[models.Project]
	h.doJSON(http.MethodGet, "/v1/projects"+query, h.admin.Secret, nil, http.StatusOK, &p)
	return p
}

func names(ps []models.Project) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestListProjectsEmptyBodyIsExact(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil)
	const want = `{"_meta":{"page":1,"perPage":25,"totalItems":0,"totalPages":0},"items":[]}`
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != want {
		t.Fatalf("got %d %s, want 200 %s", rec.Code, rec.Body, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestListProjectsPagination(t *testing.T) {
	h := newHarness(t)
	// 30 projects one second apart: p29 is the newest.
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var newestFirst []string
	for i := range 30 {
		h.insertProject(h.admin.WorkspaceID, fmt.Sprintf("p%02d", i), models.TaskLLMBase, base.Add(time.Duration(i)*time.Second))
	}
	for i := 29; i >= 0; i-- {
		newestFirst = append(newestFirst, fmt.Sprintf("p%02d", i))
	}

	cases := []struct {
		name  string
		query string
		meta  models.PageMeta
		items []string
	}{
		{"defaults", "", models.PageMeta{Page: 1, PerPage: 25, TotalItems: 30, TotalPages: 2}, newestFirst[:25]},
		{"second page of defaults", "?page=2", models.PageMeta{Page: 2, PerPage: 25, TotalItems: 30, TotalPages: 2}, newestFirst[25:]},
		{"page past the end", "?page=3", models.PageMeta{Page: 3, PerPage: 25, TotalItems: 30, TotalPages: 2}, []string{}},
		{"far past the end", "?page=1000&perPage=100", models.PageMeta{Page: 1000, PerPage: 100, TotalItems: 30, TotalPages: 1}, []string{}},
		// Offsets past 2^31 once wrapped onto an early page (bun's int32 OFFSET).
		{"offset past int32", "?page=42949674&perPage=100", models.PageMeta{Page: 42949674, PerPage: 100, TotalItems: 30, TotalPages: 1}, []string{}},
		{"largest page", "?page=2147483647&perPage=100", models.PageMeta{Page: 2147483647, PerPage: 100, TotalItems: 30, TotalPages: 1}, []string{}},
		{"perPage 7 rounds totalPages up", "?perPage=7", models.PageMeta{Page: 1, PerPage: 7, TotalItems: 30, TotalPages: 5}, newestFirst[:7]},
		{"last partial page", "?perPage=7&page=5", models.PageMeta{Page: 5, PerPage: 7, TotalItems: 30, TotalPages: 5}, newestFirst[28:]},
		{"exact division", "?perPage=10&page=3", models.PageMeta{Page: 3, PerPage: 10, TotalItems: 30, TotalPages: 3}, newestFirst[20:]},
		{"perPage 1", "?perPage=1&page=30", models.PageMeta{Page: 30, PerPage: 1, TotalItems: 30, TotalPages: 30}, newestFirst[29:]},
		{"perPage 100", "?perPage=100", models.PageMeta{Page: 1, PerPage: 100, TotalItems: 30, TotalPages: 1}, newestFirst},
		{"filtered count in meta", "?name=p0&perPage=4&page=3", models.PageMeta{Page: 3, PerPage: 4, TotalItems: 10, TotalPages: 3}, []string{"p01", "p00"}},
		{"filter matching nothing", "?name=zzz", models.PageMeta{Page: 1, PerPage: 25, TotalItems: 0, TotalPages: 0}, []string{}},
		{"filter matching nothing, page 2", "?name=zzz&page=2", models.PageMeta{Page: 2, PerPage: 25, TotalItems: 0, TotalPages: 0}, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := h.listPage(c.query)
			if p.Meta != c.meta {
				t.Errorf("_meta %+v, want %+v", p.Meta, c.meta)
			}
			if got := names(p.Items); !reflect.DeepEqual(got, c.items) {
				t.Errorf("items %v, want %v", got, c.items)
			}
		})
	}
}

func TestListProjectsBadParameters(t *testing.T) {
	h := newHarness(t)
	k := h.admin.Secret
	bad := func(name, query, field string) apiCase {
		return apiCase{name: name, method: http.MethodGet, url: "/v1/projects?" + query, key: k,
			status: http.StatusBadRequest, wantCode: "validation_failed", wantField: field}
	}
	h.run([]apiCase{
		bad("page 0", "page=0", "page"),
		bad("page -1", "page=-1", "page"),
		bad("page abc", "page=abc", "page"),
		bad("page empty", "page=", "page"),
		bad("page 1.5", "page=1.5", "page"),
		bad("page repeated", "page=1&page=2", "page"),
		bad("page beyond int32", "page=99999999999999999999", "page"),
		bad("perPage 0", "perPage=0", "perPage"),
		bad("perPage -5", "perPage=-5", "perPage"),
		bad("perPage 101", "perPage=101", "perPage"),
		bad("perPage abc", "perPage=abc", "perPage"),
		bad("taskType unknown", "taskType=image-classification", "taskType"),
		bad("taskType wrong case", "taskType=LLM-BASE", "taskType"),
		bad("name longer than any project name", "name="+strings.Repeat("n", 257), "name"),
		bad("name with a NUL byte", "name=a%00b", "name"),
		// url.Values would drop these pairs silently, and the filter with them.
		bad("semicolon in the query", "name=a;b", "query"),
		bad("broken escape in the query", "taskType=%zz", "query"),
		{name: "perPage 100 is allowed", method: http.MethodGet, url: "/v1/projects?perPage=100", key: k, status: http.StatusOK},
		{name: "page 1 perPage 1 is allowed", method: http.MethodGet, url: "/v1/projects?page=1&perPage=1", key: k, status: http.StatusOK},
		{name: "every valid taskType is allowed", method: http.MethodGet, url: "/v1/projects?taskType=tabular-regression", key: k, status: http.StatusOK},
	})

	// Several problems are reported together.
	rec := h.do(http.MethodGet, "/v1/projects?page=0&perPage=500&taskType=x", k, nil)
	e := checkError(t, rec, "validation_failed", "")
	if len(e.Error.Details) != 3 {
		t.Errorf("want 3 details (page, perPage, taskType), got %s", rec.Body)
	}
}

func TestListProjectsFilters(t *testing.T) {
	h := newHarness(t)
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []struct {
		name string
		tt   models.TaskType
	}{
		{"Fraud Detector", models.TaskTabularClassification},
		{"fraud-v2", models.TaskLLMBase},
		{"Churn", models.TaskTabularClassification},
		{"100% sure", models.TaskTextClassification},
		{"snake_case", models.TaskTabularRegression},
		{"snakeXcase", models.TaskTabularRegression},
		{`back\slash`, models.TaskLLMBase},
		{"Ünïcode Ärger", models.TaskLLMBase},
	} {
		h.insertProject(h.admin.WorkspaceID, p.name, p.tt, base.Add(time.Duration(i)*time.Minute))
	}
	cases := []struct {
		name  string
		query url.Values
		want  []string
	}{
		{"substring, any case", url.Values{"name": {"FRAUD"}}, []string{"fraud-v2", "Fraud Detector"}},
		{"inner substring", url.Values{"name": {"etec"}}, []string{"Fraud Detector"}},
		{"percent is literal", url.Values{"name": {"%"}}, []string{"100% sure"}},
		{"underscore is literal", url.Values{"name": {"e_c"}}, []string{"snake_case"}},
		{"backslash is literal", url.Values{"name": {`k\s`}}, []string{`back\slash`}},
		{"non-ASCII, any case", url.Values{"name": {"ärger"}}, []string{"Ünïcode Ärger"}},
		{"taskType", url.Values{"taskType": {"tabular-classification"}}, []string{"Churn", "Fraud Detector"}},
		{"taskType with no projects", url.Values{"taskType": {"text-classification"}, "name": {"churn"}}, []string{}},
		{"name and taskType together", url.Values{"name": {"fraud"}, "taskType": {"llm-base"}}, []string{"fraud-v2"}},
		{"empty name matches all", url.Values{"name": {""}}, []string{"Ünïcode Ärger", `back\slash`, "snakeXcase", "snake_case", "100% sure", "Churn", "fraud-v2", "Fraud Detector"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := h.listPage("?" + c.query.Encode())
			if got := names(p.Items); !reflect.DeepEqual(got, c.want) {
				t.Errorf("items %v, want %v", got, c.want)
			}
			if p.Meta.TotalItems != len(c.want) {
				t.Errorf("totalItems %d, want %d", p.Meta.TotalItems, len(c.want))
			}
		})
	}
}

// Projects created in the same instant come back in one stable order (id
// descending, the tie-break), and paging through them one at a time neither
// repeats nor skips any.
func TestListProjectsTieBreakIsStable(t *testing.T) {
	h := newHarness(t)
	same := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ids := map[string]uuid.UUID{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ids[n] = h.insertProject(h.admin.WorkspaceID, n, models.TaskLLMBase, same)
	}
	h.insertProject(h.admin.WorkspaceID, "newer", models.TaskLLMBase, same.Add(time.Microsecond))
	h.insertProject(h.admin.WorkspaceID, "older", models.TaskLLMBase, same.Add(-time.Microsecond))

	var tied []string
	for n := range ids {
		tied = append(tied, n)
	}
	// The tie-break promises id descending; uuids order as their hex text does.
	sort.Slice(tied, func(i, j int) bool { return ids[tied[i]].String() > ids[tied[j]].String() })
	want := append(append([]string{"newer"}, tied...), "older")

	for range 3 {
		if got := names(h.listPage("").Items); !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	var paged []string
	for page := 1; page <= len(want); page++ {
		p := h.listPage(fmt.Sprintf("?perPage=1&page=%d", page))
		paged = append(paged, names(p.Items)...)
	}
	if !reflect.DeepEqual(paged, want) {
		t.Errorf("one per page gives %v, want %v", paged, want)
	}
}

// A key sees only its own workspace's projects, and names are unique per
// workspace only.
func TestListProjectsIsScopedToWorkspace(t *testing.T) {
	h := newHarness(t)
	other, err := h.store.Bootstrap(context.Background(), "Other", "other@other.test")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	h.insertProject(h.admin.WorkspaceID, "mine", models.TaskLLMBase, now)
	h.insertProject(other.WorkspaceID, "theirs", models.TaskLLMBase, now)
	h.insertProject(other.WorkspaceID, "theirs too", models.TaskLLMBase, now)

	p := h.listPage("")
	if got := names(p.Items); !reflect.DeepEqual(got, []string{"mine"}) || p.Meta.TotalItems != 1 {
		t.Errorf("own workspace lists %v (total %d), want [mine]", got, p.Meta.TotalItems)
	}
	if n := names(h.listPage("?name=theirs").Items); len(n) != 0 {
		t.Errorf("a name filter reached another workspace: %v", n)
	}
	var theirs models.Page[models.Project]
	h.doJSON(http.MethodGet, "/v1/projects", other.Secret, nil, http.StatusOK, &theirs)
	if got := names(theirs.Items); len(got) != 2 || theirs.Meta.TotalItems != 2 {
		t.Errorf("other workspace lists %v, want its 2 projects", got)
	}
	for _, p := range theirs.Items {
		if p.WorkspaceID != other.WorkspaceID {
			t.Errorf("project %s of workspace %s listed for %s", p.Name, p.WorkspaceID, other.WorkspaceID)
		}
	}
	// The same name is free in another workspace.
	h.doJSON(http.MethodPost, "/v1/projects", other.Secret,
		map[string]string{"name": "mine", "taskType": "llm-base"}, http.StatusCreated, nil)
}
