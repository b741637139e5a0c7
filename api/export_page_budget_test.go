package api

import "time"

// Hooks for the page budget's API test: a tiny budget, a short wait, and
// a way to hold part of it as a concurrent page would.

// SetEventPageBudgetForTest replaces the server's event page budget.
func (s *Server) SetEventPageBudgetForTest(size int64, wait time.Duration) {
	s.pages = newPageBudget(size, wait)
}

// HoldEventPageBudgetForTest takes n bytes of the budget without waiting;
// ok is false when they are not free. release gives them back.
func (s *Server) HoldEventPageBudgetForTest(n int64) (release func(), ok bool) {
	if !s.pages.sem.TryAcquire(n) {
		return nil, false
	}
	return func() { s.pages.sem.Release(n) }, true
}
