package models

// PageMeta is the `_meta` member of paginated responses.
type PageMeta struct {
	Page       int `json:"page"`
	PerPage    int `json:"perPage"`
	TotalItems int `json:"totalItems"`
	TotalPages int `json:"totalPages"`
}

// Page is the pagination envelope.
type Page[T any] struct {
	Meta  PageMeta `json:"_meta"`
	Items []T      `json:"items"`
}

// PageRequest is a validated page/perPage pair.
type PageRequest struct {
	Page    int
	PerPage int
}

// Offset is the number of items before this page.
func (p PageRequest) Offset() int { return (p.Page - 1) * p.PerPage }

// NewPage builds the envelope; no items means zero pages.
func NewPage[T any](req PageRequest, total int, items []T) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{
		Meta: PageMeta{
			Page:       req.Page,
			PerPage:    req.PerPage,
			TotalItems: total,
			TotalPages: (total + req.PerPage - 1) / req.PerPage,
		},
		Items: items,
	}
}
