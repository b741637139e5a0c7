package api

import (
	"context"

	"github.com/openlayer-ai/workspace-service/models"
)

// AuthenticateForTest runs the authentication lookup path alone (hash the
// token, find the key by hash, check it at the server's clock), for the
// benchmark of its cost.
func (s *Server) AuthenticateForTest(ctx context.Context, token string) (models.Principal, error) {
	return s.principalFor(ctx, token)
}
