package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// projectFields is every member of the Project object in the spec.
var projectFields = []string{
	"creatorId", "dateCreated", "dateUpdated", "description", "developmentGoalCount", "gitRepo",
	"goalCount", "id", "inferencePipelineCount", "links", "monitoringGoalCount", "name", "sample",
	"slackChannelId", "slackChannelName", "slackChannelNotificationsEnabled", "source", "taskType",
	"unreadNotificationCount", "versionCount", "workspaceId",
}

func TestCreateProject(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPost, "/v1/projects", h.admin.Secret,
		`{"name":"  Fraud model ","taskType":"tabular-classification","description":"detects fraud"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d, body %s", rec.Code, rec.Body)
	}
	createBody := rec.Body.Bytes()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(createBody, &raw); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range raw {
		got = append(got, k)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, projectFields) {
		t.Errorf("members %v\nwant    %v", got, projectFields)
	}

	var p models.Project
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	want := models.Project{
		ID: p.ID, WorkspaceID: h.admin.WorkspaceID, CreatorID: &h.admin.UserID,
		Name: "Fraud model", Description: "detects fraud", Source: "api",
		TaskType:    models.TaskTabularClassification,
		DateCreated: p.DateCreated, DateUpdated: p.DateCreated,
		Links: models.ProjectLinks{App: testAppBaseURL + "/projects/" + p.ID.String()},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("project\n %+v\nwant\n %+v", p, want)
	}
	if p.ID == uuid.Nil || time.Since(p.DateCreated) > time.Minute || time.Since(p.DateCreated) < 0 {
		t.Errorf("id %s, dateCreated %s: want a fresh id and now", p.ID, p.DateCreated)
	}
	if string(raw["gitRepo"]) != "null" {
		t.Errorf("gitRepo %s, want null", raw["gitRepo"])
	}

	// The list returns the very same object, timestamps included.
	rec = h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil)
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || len(page.Items) != 1 {
		t.Fatalf("list after create: %s", rec.Body)
	}
	var created, listed any
	if err := json.Unmarshal(createBody, &created); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(page.Items[0], &listed); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(created, listed) {
		t.Errorf("create answered\n %s\nlist answers\n %s", createBody, page.Items[0])
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A member (not only an admin) creates projects, as their creator.
func TestCreateProjectByMember(t *testing.T) {
	h := newHarness(t)
	member, err := h.store.AddMember(context.Background(), h.admin.WorkspaceID, "member@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	var p models.Project
	h.doJSON(http.MethodPost, "/v1/projects", member.Secret,
		map[string]string{"name": "m", "taskType": "llm-base"}, http.StatusCreated, &p)
	if p.CreatorID == nil || *p.CreatorID != member.UserID {
		t.Errorf("creatorId %v, want the member %s", p.CreatorID, member.UserID)
	}
}

// A project with a connected repository returns every gitRepo member.
func TestListProjectWithGitRepo(t *testing.T) {
	h := newHarness(t)
	id := h.insertProject(h.admin.WorkspaceID, "with repo", models.TaskLLMBase, time.Now())
	repo := models.GitRepo{
		ID: uuid.New(), GitID: 42, DateConnected: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		DateUpdated: time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC), Branch: "main", Name: "models",
		Private: true, Slug: "acme/models", URL: "https://github.com/acme/models", RootDir: "llm/",
		ProjectID: id, GitAccountID: uuid.New(),
	}
	h.exec("UPDATE projects SET git_repo = ? WHERE id = ?", string(mustJSON(t, repo)), id)
	p := h.listPage("")
	if len(p.Items) != 1 || p.Items[0].GitRepo == nil {
		t.Fatalf("items %+v", p.Items)
	}
	if got := *p.Items[0].GitRepo; !reflect.DeepEqual(got, repo) {
		t.Errorf("gitRepo %+v, want %+v", got, repo)
	}
}

func TestCreateProjectRejectsBadInput(t *testing.T) {
	h := newHarness(t)
	k := h.admin.Secret
	h.doJSON(http.MethodPost, "/v1/projects", k, map[string]string{"name": "Taken", "taskType": "llm-base"}, http.StatusCreated, nil)

	post := func(name string, body any, status int, code, field string, header ...string) apiCase {
		return apiCase{name: name, method: http.MethodPost, url: "/v1/projects", key: k, body: body,
			header: header, status: status, wantCode: code, wantField: field}
	}
	invalid := func(name string, body any, field string) apiCase {
		return post(name, body, http.StatusBadRequest, "validation_failed", field)
	}
	badJSON := func(name string, body any) apiCase {
		return post(name, body, http.StatusBadRequest, "invalid_json", "")
	}
	huge := `{"name":"big","taskType":"llm-base","description":"` + strings.Repeat("x", 1<<20) + `"}`
	h.run([]apiCase{
		invalid("missing name", `{"taskType":"llm-base"}`, "name"),
		invalid("null name", `{"name":null,"taskType":"llm-base"}`, "name"),
		invalid("empty name", `{"name":"","taskType":"llm-base"}`, "name"),
		invalid("blank name", `{"name":"   \t ","taskType":"llm-base"}`, "name"),
		invalid("name of 257 characters", `{"name":"`+strings.Repeat("é", 257)+`","taskType":"llm-base"}`, "name"),
		invalid("name of the wrong type", `{"name":7,"taskType":"llm-base"}`, "name"),
		invalid("name with a NUL byte", `{"name":"a\u0000b","taskType":"llm-base"}`, "name"),
		invalid("missing taskType", `{"name":"x"}`, "taskType"),
		invalid("unknown taskType", `{"name":"x","taskType":"image-segmentation"}`, "taskType"),
		invalid("empty taskType", `{"name":"x","taskType":""}`, "taskType"),
		invalid("description too long", `{"name":"x","taskType":"llm-base","description":"`+strings.Repeat("d", 10001)+`"}`, "description"),
		invalid("description with a NUL byte", `{"name":"x","taskType":"llm-base","description":"\u0000"}`, "description"),
		invalid("unknown field", `{"name":"x","taskType":"llm-base","source":"web"}`, "source"),
		post("duplicate name", `{"name":"Taken","taskType":"llm-base"}`, http.StatusConflict, "project_name_taken", ""),
		post("duplicate name in another case", `{"name":"tAKEN","taskType":"text-classification"}`, http.StatusConflict, "project_name_taken", ""),
		post("duplicate name once trimmed", `{"name":" Taken ","taskType":"llm-base"}`, http.StatusConflict, "project_name_taken", ""),
		badJSON("malformed JSON", `{"name":"x",`),
		badJSON("not JSON at all", `name=x&taskType=llm-base`),
		badJSON("empty body", ``),
		badJSON("JSON array", `[{"name":"x","taskType":"llm-base"}]`),
		badJSON("JSON string", `"x"`),
		badJSON("trailing garbage", `{"name":"x","taskType":"llm-base"} garbage`),
		badJSON("two objects", `{"name":"x","taskType":"llm-base"}{}`),
		post("text/plain", `{"name":"x","taskType":"llm-base"}`, http.StatusUnsupportedMediaType, "unsupported_media_type", "", "Content-Type", "text/plain"),
		post("form content type", `{"name":"x","taskType":"llm-base"}`, http.StatusUnsupportedMediaType, "unsupported_media_type", "", "Content-Type", "application/x-www-form-urlencoded"),
		post("unparsable content type", `{"name":"x","taskType":"llm-base"}`, http.StatusUnsupportedMediaType, "unsupported_media_type", "", "Content-Type", "json;;"),
		post("body over 1 MiB", huge, http.StatusRequestEntityTooLarge, "body_too_large", ""),
		post("no key", `{"name":"x","taskType":"llm-base"}`, http.StatusUnauthorized, "missing_credentials", "", "Authorization", ""),
	})

	// Nothing was half-written by any of the refused requests.
	if p := h.listPage(""); p.Meta.TotalItems != 1 || p.Items[0].Name != "Taken" {
		t.Errorf("after refused creates the workspace holds %v", names(p.Items))
	}

	// Limits are inclusive, and JSON media types with parameters are fine.
	h.run([]apiCase{
		post("name of 256 characters", `{"name":"`+strings.Repeat("é", 256)+`","taskType":"llm-base"}`, http.StatusCreated, "", ""),
		post("charset parameter", `{"name":"cs","taskType":"llm-base"}`, http.StatusCreated, "", "", "Content-Type", "application/json; charset=utf-8"),
	})
}

func TestDeleteProject(t *testing.T) {
	h := newHarness(t)
	other, err := h.store.Bootstrap(context.Background(), "Other", "other@other.test")
	if err != nil {
		t.Fatal(err)
	}
	mine := h.insertProject(h.admin.WorkspaceID, "mine", models.TaskLLMBase, time.Now())
	theirs := h.insertProject(other.WorkspaceID, "theirs", models.TaskLLMBase, time.Now())
	k := h.admin.Secret
	del := func(name, id, key string, status int, code string) apiCase {
		return apiCase{name: name, method: http.MethodDelete, url: "/v1/projects/" + id, key: key, status: status, wantCode: code}
	}
	h.run([]apiCase{
		del("no key", mine.String(), "", http.StatusUnauthorized, "missing_credentials"),
		del("another workspace's project", theirs.String(), k, http.StatusNotFound, "not_found"),
		del("malformed id", "not-a-uuid", k, http.StatusNotFound, "not_found"),
		del("unknown id", uuid.NewString(), k, http.StatusNotFound, "not_found"),
		del("own project", mine.String(), k, http.StatusNoContent, ""),
		del("own project again", mine.String(), k, http.StatusNotFound, "not_found"),
	})
	// Their project survived the refused delete: its owner can still delete it.
	rec := h.do(http.MethodDelete, "/v1/projects/"+theirs.String(), other.Secret, nil)
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Errorf("owner's delete: %d %q, want 204 and no body", rec.Code, rec.Body)
	}
	if p := h.listPage(""); p.Meta.TotalItems != 0 {
		t.Errorf("deleted project still listed: %v", names(p.Items))
	}
}
