package item

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/scope"
)

// Policy is what a handle applies to every item: its scope, the default
// lifetime of what it stores, and its clock.
type Policy struct {
	Scope scope.Scope
	TTL   time.Duration
	Clock func() time.Time
}

// NewPolicy checks a handle's scope and TTL (a bad one wraps invalid);
// a nil clock means time.Now.
func NewPolicy(invalid error, s scope.Scope, ttl time.Duration, clock func() time.Time) (Policy, error) {
	if err := s.Validate(); err != nil {
		return Policy{}, fmt.Errorf("%w: %w", invalid, err)
	}
	if ttl < 0 {
		return Policy{}, fmt.Errorf("%w: TTL %v, want >= 0", invalid, ttl)
	}
	if clock == nil {
		clock = time.Now
	}
	return Policy{Scope: maps.Clone(s), TTL: ttl, Clock: clock}, nil
}

// Now is the policy's clock.
func (p Policy) Now() time.Time { return p.Clock() }

// InScope reports whether an item with metadata meta has every dimension
// of the policy's scope.
func (p Policy) InScope(meta map[string]any) bool {
	for name, v := range p.Scope {
		if meta[scope.Prefix+name] != v {
			return false
		}
	}
	return true
}

// Visible reports whether an item with metadata meta is the handle's to
// see: in its scope and not expired.
func (p Policy) Visible(meta map[string]any) bool {
	return p.InScope(meta) && !Expired(meta, p.Now())
}

// Expiry is when an item stored now expires: at when set, else after ttl
// when positive, else after the policy's TTL; zero for never. A negative
// ttl wraps invalid.
func (p Policy) Expiry(invalid error, ttl time.Duration, at time.Time) (time.Time, error) {
	now := p.Now()
	switch {
	case ttl < 0:
		return time.Time{}, fmt.Errorf("%w: TTL %v, want >= 0", invalid, ttl)
	case at.IsZero() && ttl > 0:
		at = now.Add(ttl)
	case at.IsZero() && p.TTL > 0:
		at = now.Add(p.TTL)
	case at.IsZero():
		return time.Time{}, nil
	}
	switch {
	case !at.After(now):
		return time.Time{}, fmt.Errorf("%w: expiry %v is not after now (%v): the item could never be read", invalid, at, now)
	case at.After(maxExpiry) || at.Before(now): // past year 9999, or a TTL that overflowed
		return time.Time{}, fmt.Errorf("%w: expiry %v is past %v", invalid, at, maxExpiry)
	}
	return at, nil
}

// maxExpiry is the latest expiry an item may have: its Unix milliseconds
// fit a float64 exactly, as filters compare them, with room to spare.
var maxExpiry = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// Read is the filter of one read: the caller's where, the policy's scope
// (or s when set; no scope when all), items not expired.
func (p Policy) Read(invalid error, s scope.Scope, all bool, where map[string]any) (*mnemo.Filter, error) {
	r := Read{Scope: p.Scope, AllScopes: all, Now: p.Now(), Where: where}
	if s != nil {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", invalid, err)
		}
		r.Scope = s
	}
	return r.Filter(invalid)
}

// Sweep deletes from c the items of the policy's scope that have expired,
// a page at a time, and returns how many it deleted. O(items).
func (p Policy) Sweep(ctx context.Context, c *textvec.Bound) (int, error) {
	now := p.Now()
	n := 0
	err := c.Do(ctx, func(c mnemo.Collection) error {
		return textvec.ScanPages(ctx, c, "", func(page []mnemo.Record) error {
			var ids []string
			for _, r := range page {
				if Expired(r.Metadata, now) && p.InScope(r.Metadata) {
					ids = append(ids, r.ID)
				}
			}
			if len(ids) == 0 {
				return nil
			}
			// Only what is still expired and in scope: a record written
			// again since the scan stays.
			d, err := textvec.DeleteIf(ctx, c, func(m map[string]any) bool { return Expired(m, now) && p.InScope(m) }, ids...)
			n += d
			return err
		})
	})
	return n, err
}

// Count counts the items of c in the policy's scope: live ones and
// expired ones a sweep has not deleted yet. Without a scope or a TTL
// anywhere it still scans: an item may carry its own expiry. O(items).
func (p Policy) Count(ctx context.Context, c *textvec.Bound) (live, expired int, err error) {
	now := p.Now()
	err = c.Do(ctx, func(c mnemo.Collection) error {
		live, expired = 0, 0
		return textvec.ScanPages(ctx, c, "", func(page []mnemo.Record) error {
			for _, r := range page {
				switch {
				case !p.InScope(r.Metadata):
				case Expired(r.Metadata, now):
					expired++
				default:
					live++
				}
			}
			return nil
		})
	})
	return live, expired, err
}

// Sweeper runs a function in the background at an interval until Stop.
type Sweeper struct {
	stop context.CancelFunc
	done chan struct{}
}

// DefaultSweepEvery is the adapters' default SweepEvery.
const DefaultSweepEvery = 10 * time.Minute

// StartSweeper calls sweep every interval until Stop, the adapters'
// SweepEvery option: 0 means DefaultSweepEvery, a negative interval
// starts nothing (a nil Sweeper, whose Stop does nothing). What sweep
// returns is dropped: it runs again at the next tick.
func StartSweeper(every time.Duration, sweep func(context.Context) (int, error)) *Sweeper {
	if every == 0 {
		every = DefaultSweepEvery
	}
	if every < 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sweeper{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sweep(ctx)
			}
		}
	}()
	return s
}

// Stop ends the sweeps and waits for one running to return.
func (s *Sweeper) Stop() {
	if s == nil {
		return
	}
	s.stop()
	<-s.done
}
