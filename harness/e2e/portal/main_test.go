package portal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/receiver"
	"github.com/openlayer-ai/workspace-service/harness/testenv"
)

// rcv is the binary's one HTTPS receiver. The worker runs in this process
// and reads SSL_CERT_FILE once, when it first verifies a certificate, so
// the receiver's certificate is written there before any test runs.
var rcv *receiver.Receiver

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "portal-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rcv = receiver.New()
	path := filepath.Join(dir, "receiver.pem")
	if err := rcv.WritePEM(path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("SSL_CERT_FILE", path)
	defer os.RemoveAll(dir)
	defer rcv.Close()
	testenv.Main(m)
}
