package models

import (
	"encoding/json"
	"testing"
)

func TestNewPage(t *testing.T) {
	cases := []struct {
		page, perPage, total int
		wantPages, offset    int
	}{
		{1, 25, 0, 0, 0},
		{1, 25, 1, 1, 0},
		{1, 25, 24, 1, 0},
		{1, 25, 25, 1, 0},
		{2, 25, 26, 2, 25},
		{3, 7, 30, 5, 14},
		{5, 10, 50, 5, 40},
		{1, 10, 51, 6, 0},
		{9, 100, 1, 1, 800},
		{1, 1, 100, 100, 0},
		{4, 1, 0, 0, 3},
	}
	for _, c := range cases {
		req := PageRequest{Page: c.page, PerPage: c.perPage}
		p := NewPage(req, c.total, []int{})
		want := PageMeta{Page: c.page, PerPage: c.perPage, TotalItems: c.total, TotalPages: c.wantPages}
		if p.Meta != want {
			t.Errorf("%+v total %d: meta %+v, want %+v", req, c.total, p.Meta, want)
		}
		if got := req.Offset(); got != c.offset {
			t.Errorf("%+v: offset %d, want %d", req, got, c.offset)
		}
	}
}

// No items encode as [], never null.
func TestNewPageEncodesNoItemsAsEmptyArray(t *testing.T) {
	b, err := json.Marshal(NewPage[string](PageRequest{Page: 1, PerPage: 25}, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"_meta":{"page":1,"perPage":25,"totalItems":0,"totalPages":0},"items":[]}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
