package models

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// TaskType is the machine-learning task a project is about.
type TaskType string

// Task types accepted by the API.
const (
	TaskLLMBase               TaskType = "llm-base"
	TaskTabularClassification TaskType = "tabular-classification"
	TaskTabularRegression     TaskType = "tabular-regression"
	TaskTextClassification    TaskType = "text-classification"
)

// TaskTypes lists every accepted task type, for validation messages.
var TaskTypes = []TaskType{TaskLLMBase, TaskTabularClassification, TaskTabularRegression, TaskTextClassification}

// Valid reports whether t is one of TaskTypes.
func (t TaskType) Valid() bool {
	return slices.Contains(TaskTypes, t)
}

// Project sources.
const (
	SourceWeb = "web"
	SourceAPI = "api"
)

// Project is a project as the API returns it.
type Project struct {
	ID                               uuid.UUID    `json:"id"`
	WorkspaceID                      uuid.UUID    `json:"workspaceId"`
	CreatorID                        *uuid.UUID   `json:"creatorId"`
	Name                             string       `json:"name"`
	DateCreated                      time.Time    `json:"dateCreated"`
	DateUpdated                      time.Time    `json:"dateUpdated"`
	Description                      string       `json:"description"`
	Sample                           bool         `json:"sample"`
	Source                           string       `json:"source"`
	TaskType                         TaskType     `json:"taskType"`
	VersionCount                     int          `json:"versionCount"`
	InferencePipelineCount           int          `json:"inferencePipelineCount"`
	GoalCount                        int          `json:"goalCount"`
	DevelopmentGoalCount             int          `json:"developmentGoalCount"`
	MonitoringGoalCount              int          `json:"monitoringGoalCount"`
	UnreadNotificationCount          int          `json:"unreadNotificationCount"`
	Links                            ProjectLinks `json:"links"`
	SlackChannelNotificationsEnabled bool         `json:"slackChannelNotificationsEnabled"`
	SlackChannelName                 string       `json:"slackChannelName"`
	SlackChannelID                   string       `json:"slackChannelId"`
	GitRepo                          *GitRepo     `json:"gitRepo"`
}

// ProjectLinks holds links to the project elsewhere.
type ProjectLinks struct {
	App string `json:"app"`
}

// GitRepo is a repository connected to a project.
type GitRepo struct {
	ID            uuid.UUID `json:"id"`
	GitID         int64     `json:"gitId"`
	DateConnected time.Time `json:"dateConnected"`
	DateUpdated   time.Time `json:"dateUpdated"`
	Branch        string    `json:"branch"`
	Name          string    `json:"name"`
	Private       bool      `json:"private"`
	Slug          string    `json:"slug"`
	URL           string    `json:"url"`
	RootDir       string    `json:"rootDir"`
	ProjectID     uuid.UUID `json:"projectId"`
	GitAccountID  uuid.UUID `json:"gitAccountId"`
}

// ProjectFilter selects projects for a list.
type ProjectFilter struct {
	WorkspaceID uuid.UUID
	Name        string   // case-insensitive substring; empty matches all
	TaskType    TaskType // empty matches all
	Page        PageRequest
}

// NewProject is a validated request to create a project.
type NewProject struct {
	WorkspaceID uuid.UUID
	CreatorID   uuid.UUID
	Name        string
	TaskType    TaskType
	Description string
	Cap         int // most projects, this one included; 0: no cap
}
