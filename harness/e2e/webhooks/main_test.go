package webhooks_test

import (
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
)

// TestMain makes the worker trust the test receivers through the system
// pool, exactly as production trusts real ones: every httptest TLS server
// presents the same built-in certificate, so its PEM in SSL_CERT_FILE
// covers all of them. Go reads SSL_CERT_FILE once per process, when the
// system pool is first needed, so the variable is set here, before any
// test (and so any TLS verification) runs in this binary.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "webhook-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := httptest.NewTLSServer(nil)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	srv.Close()
	path := filepath.Join(dir, "receivers.pem")
	if err := os.WriteFile(path, cert, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("SSL_CERT_FILE", path)
	defer os.RemoveAll(dir)
	testenv.Main(m)
}
