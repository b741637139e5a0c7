package api

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/openlayer-ai/workspace-service/models"
)

const projectNameMax = 256

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) {
	var v models.Validation
	q := query(r, &v)
	f := models.ProjectFilter{
		WorkspaceID: principal(r).WorkspaceID,
		Page:        pageParams(q, &v),
		Name:        q.Get("name"),
		TaskType:    models.TaskType(q.Get("taskType")),
	}
	if utf8.RuneCountInString(f.Name) > projectNameMax {
		v.Add("name", "must be at most 256 characters")
	} else if hasNUL(f.Name) {
		v.Add("name", noNUL)
	}
	if f.TaskType != "" && !f.TaskType.Valid() {
		v.Add("taskType", "must be one of "+taskTypeList())
	}
	if err := v.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.store.Projects(s.cfg.AppBaseURL).List(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

type createProjectRequest struct {
	Name        *string `json:"name"`
	TaskType    *string `json:"taskType"`
	Description *string `json:"description"`
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) {
	var req createProjectRequest
	if err := decode(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	p := principal(r)
	in := models.NewProject{WorkspaceID: p.WorkspaceID, CreatorID: p.UserID}
	var v models.Validation
	switch {
	case req.Name == nil:
		v.Add("name", "is required")
	case strings.TrimSpace(*req.Name) == "" || utf8.RuneCountInString(*req.Name) > projectNameMax:
		v.Add("name", "must be 1 to 256 characters and not blank")
	case hasNUL(*req.Name):
		v.Add("name", noNUL)
	default:
		in.Name = strings.TrimSpace(*req.Name)
	}
	switch {
	case req.TaskType == nil:
		v.Add("taskType", "is required")
	case !models.TaskType(*req.TaskType).Valid():
		v.Add("taskType", "must be one of "+taskTypeList())
	default:
		in.TaskType = models.TaskType(*req.TaskType)
	}
	if req.Description != nil {
		if utf8.RuneCountInString(*req.Description) > 10000 {
			v.Add("description", "must be at most 10000 characters")
		} else if hasNUL(*req.Description) {
			v.Add("description", noNUL)
		}
		in.Description = *req.Description
	}
	if err := v.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	in.Cap = s.cfg.MaxProjectsPerWorkspace
	project, err := s.storeFor(r).Projects(s.cfg.AppBaseURL).Create(r.Context(), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, project)
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "projectId", "project")
	if err == nil {
		err = s.store.Projects(s.cfg.AppBaseURL).Delete(r.Context(), principal(r).WorkspaceID, id)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// NUL is refused: PostgreSQL text cannot hold it and bun silently drops it,
// so the stored name would differ from the one echoed.
const noNUL = "must not contain NUL (\\u0000) characters"

func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

func taskTypeList() string {
	names := make([]string, len(models.TaskTypes))
	for i, t := range models.TaskTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
