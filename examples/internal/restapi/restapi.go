// Package restapi reaches the conform provider's Stripe-shaped REST API
// with stripe-go, for the executor (examples/internal/executor): one
// send per create, the library's own retries off, each error sorted
// into the source article's classes.
package restapi

import (
	"context"
	"errors"
	"net/http"
	"os"

	stripe "github.com/stripe/stripe-go/v82"

	"github.com/replaylab/replaylab/examples/internal/executor"
)

// New is the provider at REPLAYLAB_API_BASE, authenticated with
// REPLAYLAB_API_KEY. The executor decides every resend itself: the
// library sends once.
func New() executor.Provider {
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:               stripe.String(os.Getenv("REPLAYLAB_API_BASE")),
		HTTPClient:        &http.Client{},
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	sc := stripe.NewClient(os.Getenv("REPLAYLAB_API_KEY"), stripe.WithBackends(&stripe.Backends{API: backend, Connect: backend, Uploads: backend, MeterEvents: backend}))
	return rest{sc}
}

// rest reaches the provider through its REST API.
type rest struct{ sc *stripe.Client }

func refundOf(r *stripe.Refund) executor.Refund {
	return executor.Refund{ID: r.ID, Status: string(r.Status), Intent: r.Metadata["intent"], Amount: r.Amount}
}

func (p rest) Create(ctx context.Context, rec *executor.Record) (executor.Refund, executor.Class, error) {
	params := &stripe.RefundCreateParams{Charge: stripe.String(rec.Charge), Amount: stripe.Int64(rec.Amount)}
	params.AddMetadata("intent", rec.Intent.Intent)
	params.SetIdempotencyKey(rec.Key)
	r, err := p.sc.V1Refunds.Create(ctx, params)
	if err == nil {
		return refundOf(r), executor.KnownTerminal, nil
	}
	return executor.Refund{}, class(err), err
}

// class sorts a create's error into the source article's classes.
func class(err error) executor.Class {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return executor.Unknown // a timeout or a closed connection
	}
	switch {
	case se.HTTPStatusCode == http.StatusConflict:
		return executor.NotTerminal
	case se.Type == stripe.ErrorTypeIdempotency:
		return executor.Mismatch
	case se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500 && se.HTTPStatusCode != http.StatusTooManyRequests:
		return executor.KnownFailure
	}
	return executor.Unknown
}

// List lists the charge's refunds and keeps the intent's.
func (p rest) List(ctx context.Context, in executor.Intent) ([]executor.Refund, error) {
	var out []executor.Refund
	for r, err := range p.sc.V1Refunds.List(ctx, &stripe.RefundListParams{Charge: stripe.String(in.Charge)}) {
		if err != nil {
			return nil, err
		}
		if r.Metadata["intent"] == in.Intent {
			out = append(out, refundOf(r))
		}
	}
	return out, nil
}

func (p rest) Get(ctx context.Context, id string) (executor.Refund, error) {
	r, err := p.sc.V1Refunds.Retrieve(ctx, id, nil)
	if err != nil {
		return executor.Refund{}, err
	}
	return refundOf(r), nil
}
