// Command admin holds the operator commands. Each prints one JSON document
// on stdout; errors go to stderr with a non-zero exit.
//
//	admin migrate
//	admin bootstrap --workspace-name NAME --email EMAIL
//	admin add-member --workspace-id ID --email EMAIL --role admin|member
//	admin reseal-webhook-secrets [--batch-size N]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/migrations"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

const usage = `usage:
  admin migrate
  admin bootstrap --workspace-name NAME --email EMAIL
  admin add-member --workspace-id ID --email EMAIL --role admin|member
  admin reseal-webhook-secrets [--batch-size N]
the database comes from DATABASE_URL; reseal-webhook-secrets re-encrypts
webhook signing secrets (v1a subscriptions' ed25519 private keys among
them) under the first key of WEBHOOK_SECRET_KEY`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "admin:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	if err := cfg.RequireDatabase(); err != nil {
		return err
	}
	db, err := store.Open(cfg.DatabaseURL, cfg.DatabaseMaxConns)
	if err != nil {
		return err
	}
	defer db.Close()
	st := store.New(db)

	var result any
	switch cmd, rest := args[0], args[1:]; cmd {
	case "migrate":
		if err := parse(flag.NewFlagSet(cmd, flag.ContinueOnError), rest); err != nil {
			return err
		}
		result, err = migrations.Apply(ctx, db)
	case "bootstrap":
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		name := fs.String("workspace-name", "", "name of the new workspace")
		email := fs.String("email", "", "email of its first admin")
		if err := parse(fs, rest); err != nil {
			return err
		}
		if err := required(map[string]string{"--workspace-name": *name, "--email": *email}); err != nil {
			return err
		}
		result, err = st.Bootstrap(ctx, *name, *email)
	case "add-member":
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		wsID := fs.String("workspace-id", "", "workspace to join")
		email := fs.String("email", "", "email of the member")
		role := fs.String("role", "member", "admin or member")
		if err := parse(fs, rest); err != nil {
			return err
		}
		if err := required(map[string]string{"--workspace-id": *wsID, "--email": *email}); err != nil {
			return err
		}
		id, perr := uuid.Parse(*wsID)
		if perr != nil {
			return fmt.Errorf("--workspace-id: not a uuid: %q", *wsID)
		}
		if !models.Role(*role).Valid() {
			return fmt.Errorf("--role: want admin or member, got %q", *role)
		}
		result, err = st.AddMember(ctx, id, *email, models.Role(*role))
		if errors.Is(err, models.ErrNotFound) {
			// The store's bare "not found" comes from the workspace foreign key.
			err = fmt.Errorf("--workspace-id: workspace %s not found", id)
		}
	case "reseal-webhook-secrets":
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		batch := fs.Int("batch-size", 500, "subscriptions per transaction")
		if err := parse(fs, rest); err != nil {
			return err
		}
		if *batch < 1 {
			return fmt.Errorf("--batch-size: want a positive number, got %d", *batch)
		}
		box, berr := secret.NewBox(cfg.WebhookSecretKeys...)
		if berr != nil {
			return berr
		}
		result, err = resealWebhookSecrets(ctx, db, box, *batch)
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(result)
}

func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w\n%s", fs.Name(), err, usage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

func required(flags map[string]string) error {
	var missing []string
	for name, v := range flags {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("missing required flag(s): %s", strings.Join(missing, ", "))
	}
	return nil
}
