package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/engine/internal/bm25"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/wal"
)

// DB is an embedded vector database: named collections of records in one
// directory. It is safe for concurrent use by multiple goroutines. Close
// waits for operations in flight and stops the background checkpointer.
//
// Lock order (a goroutine holding one may take only those after it):
//
//	DB.closeMu -> DB.mu -> DB.cpMu -> Collection.writes ->
//	Collection.stripes (ascending) -> Collection.mu
//	Collection.writes -> Collection.seq.mu
//
// lifeMu, seqMark.mu, spaceGuard.mu and nameLocks.mu are leaves: nothing is
// taken while they are held. The index's locks (see index.HNSW's lock
// order) and Pebble's own are below all of these.
type DB struct {
	dir       string
	opts      Options
	fs        vfs.FS
	cpPath    string
	pdb       *pebble.DB
	lock      *pebble.Lock
	writeOpts *pebble.WriteOptions
	logger    *slog.Logger
	rec       metrics.Recorder // Options.Metrics, nil when off
	regKey    string           // key in openDirs, "" if not registered

	// inflight counts the operations in flight (enter); Close sets
	// closed under lifeMu, a leaf, then waits for them. A counter, not a
	// reader-writer lock: an operation may run another inside it (the
	// final pass of ReplaceCollection writes), and a lock that blocks new
	// readers while Close waits would deadlock the two.
	lifeMu   sync.Mutex
	inflight sync.WaitGroup
	closed   atomic.Bool
	closeMu  sync.Mutex // serialises Close

	// mu protects the following fields.
	mu          sync.Mutex
	collections map[string]*Collection

	cpMu   sync.Mutex // serialises checkpoints
	cpReq  chan *Collection
	cpStop chan struct{}
	cpDone chan struct{}

	openTook time.Duration
	// readOnly, when set, is the error every write returns: the database
	// was opened with Options.ReadOnly, or below the free-space floor.
	readOnly error
	id       identity
	fail     failure
	// markAtOpen is the sequence mark as Open found it (nil if none);
	// mark is the one kept up to date (see seqmark.go).
	markAtOpen map[uint32]uint64
	mark       *seqMark
	space      *spaceGuard
	locks      nameLocks   // the Store's named locks (store.go)
	live       *liveServer // nil when live access is off (live.go)
}

// openDirs guards against opening one directory twice in this process
// (Pebble's file lock guards against other processes).
var openDirs struct {
	sync.Mutex
	m map[string]bool
}

// Open opens (creating if needed) the database in dir. opts may be nil.
// Every collection's index is brought up before Open returns: from its
// newest checkpoint plus the log after it, or rebuilt from the records if
// the checkpoint is missing or damaged (Stats says which). A directory
// already open in this or another process yields ErrLocked.
func Open(dir string, opts *Options) (*DB, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	o := opts.withDefaults()
	db := &DB{
		dir:         dir,
		opts:        o,
		fs:          o.FS,
		logger:      o.Logger,
		rec:         o.Metrics,
		collections: make(map[string]*Collection),
		writeOpts:   pebble.Sync,
	}
	db.space = newSpaceGuard(o.FS, dir, o.MinFreeSpace)
	if o.NoSync {
		db.writeOpts = pebble.NoSync
	}
	if dir == "" {
		if !o.InMemory && opts.FS == nil {
			return nil, fmt.Errorf("%w: empty directory (set InMemory for an in-memory database)", mnemo.ErrInvalidConfig)
		}
		dir = "mnemo"
		db.dir = dir
		db.space.dir = dir
	}
	if err := db.register(); err != nil {
		return nil, err
	}
	if err := db.open(); err != nil {
		db.release()
		return nil, err
	}
	db.openTook = time.Since(start)
	db.cpReq, db.cpStop, db.cpDone = make(chan *Collection, 64), make(chan struct{}), make(chan struct{})
	go db.checkpointer()
	db.startLive()
	return db, nil
}

func (db *DB) register() error {
	if db.fs != vfs.Default {
		return nil
	}
	abs, err := filepath.Abs(db.dir)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	openDirs.Lock()
	defer openDirs.Unlock()
	if openDirs.m[abs] {
		return fmt.Errorf("%w: %s is open in this process", ErrLocked, db.dir)
	}
	if openDirs.m == nil {
		openDirs.m = make(map[string]bool)
	}
	openDirs.m[abs] = true
	db.regKey = abs
	return nil
}

func (db *DB) release() {
	if db.lock != nil {
		db.lock.Close()
		db.lock = nil
	}
	if db.regKey != "" {
		openDirs.Lock()
		delete(openDirs.m, db.regKey)
		openDirs.Unlock()
	}
}

// open does the work of Open after registration.
func (db *DB) open() error {
	state, err := db.inspectDir()
	if err != nil {
		return err
	}
	switch {
	case state == dirPartialBackup:
		return fmt.Errorf("%w: %s holds a backup that was cut short (%s is still there); delete it and back up again", ErrNotDatabase, db.dir, backupMarker)
	case state == dirForeign:
		return fmt.Errorf("%w: %s is not empty and holds no mnemo database (mnemo creates one only in an absent or empty directory)", ErrNotDatabase, db.dir)
	case state == dirEmpty && (db.opts.MustExist || db.opts.ReadOnly):
		return fmt.Errorf("%w: %s", ErrNoDatabase, db.dir)
	}
	create := state == dirEmpty
	switch {
	case db.opts.ReadOnly:
		db.readOnly = fmt.Errorf("%w: %s was opened with Options.ReadOnly", ErrReadOnly, db.dir)
	case !create && db.space.low():
		db.readOnly = db.space.errLowAtOpen()
		db.logger.Warn("free space is below the floor: opening for reading only", "dir", db.dir, "floor", sizeString(db.space.floor))
	}
	id, hasID, idErr := db.readIdentity()
	if idErr != nil && !IsCorruption(idErr) {
		return idErr
	}
	if create {
		if err := db.mkdirAll(db.dir); err != nil {
			return openError(db.dir, err)
		}
	}
	lock, err := pebble.LockDirectory(db.dir, db.fs)
	if err != nil {
		return db.lockError(err)
	}
	db.lock = lock
	cache := pebble.NewCache(db.opts.CacheSize)
	defer cache.Unref()
	popts := &pebble.Options{
		FS:     markerFS{db.fs}, // see dirs.go
		Lock:   lock,
		Cache:  cache,
		Logger: pebbleLogger{db.logger, &db.fail},
		// Pebble's newest format writes sync offsets into its log, so
		// that a damaged record followed by later synced ones is reported
		// as corruption instead of being taken for a torn tail.
		FormatMajorVersion: pebble.FormatNewest,
		ErrorIfNotExists:   !create,
		ErrorIfExists:      create,
		ReadOnly:           db.readOnly != nil,
		EventListener:      db.fail.listener(db.logger),
	}
	err = guard(func() error {
		pdb, err := pebble.Open(db.dir, popts)
		if err != nil {
			return err
		}
		db.pdb = pdb
		return nil
	})
	if err != nil {
		switch {
		case environmental(err) || create:
			return openError(db.dir, err)
		case errors.Is(err, pebble.ErrDBDoesNotExist):
			return fmt.Errorf("%w: %s holds a mnemo database whose Pebble store is missing or incomplete (%v); restore it from a backup", ErrCorrupt, db.dir, err)
		default:
			// A store that exists but cannot be opened is damaged: a file
			// missing, cut short or failing its checksum.
			return fmt.Errorf("%w: %s: its Pebble store cannot be opened: %v", ErrCorrupt, db.dir, err)
		}
	}
	db.cpPath = db.fs.PathJoin(db.dir, checkpointDir)
	if db.readOnly == nil {
		if err := db.mkdirAll(db.cpPath); err != nil {
			db.closePebble()
			return openError(db.cpPath, err)
		}
	}
	db.markAtOpen, _ = readSeqMark(db.fs, db.fs.PathJoin(db.dir, seqMarkFile))
	if err := guard(db.loadCollections); err != nil {
		db.closePebble()
		return err
	}
	if err := db.fail.get(); err != nil {
		db.closePebble()
		return err
	}
	if (!hasID || idErr != nil) && db.readOnly == nil {
		if id, err = db.writeIdentity(); err != nil {
			db.closePebble()
			return err
		}
		if idErr != nil {
			db.logger.Warn("the identity file was damaged; wrote a new one", "dir", db.dir)
		}
	}
	db.id = id
	if err := db.openSeqMark(); err != nil {
		db.closePebble()
		return err
	}
	if db.readOnly == nil {
		db.removeStrayFiles()
	}
	return nil
}

// closePebble closes Pebble after a failed open or on Close. When Fatalf
// stopped one of Pebble's goroutines, Pebble is not closed (its Close may
// wait forever for that goroutine); its other goroutines are left to end
// with the process.
func (db *DB) closePebble() error {
	if db.pdb == nil || db.fail.abandoned.Load() {
		return nil
	}
	return guard(db.pdb.Close)
}

// openError says what went wrong creating or opening a file of the
// database.
func openError(path string, err error) error {
	if errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("engine: open %s: the file system is read-only: %w", path, err)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("engine: open %s: permission denied: %w", path, err)
	}
	return fmt.Errorf("engine: open %s: %w", path, err)
}

// environmental reports an error that says something about the machine
// (a read-only or full filesystem, permissions, exhausted descriptors or
// memory), not about the database's files.
func environmental(err error) bool {
	for _, e := range []error{syscall.EROFS, syscall.ENOSPC, syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, fs.ErrPermission} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// lockError says why the directory's lock could not be taken: held by
// another process (named when the system can tell), or a filesystem
// that refuses the lock file.
func (db *DB) lockError(err error) error {
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		return openError(db.dir, err)
	}
	if db.fs == vfs.Default {
		if pid, ok := lockHolder(db.dir); ok {
			return fmt.Errorf("%w: %s is open in process %d", ErrLocked, db.dir, pid)
		}
	}
	return fmt.Errorf("%w: %s: %v", ErrLocked, db.dir, err)
}

// stored is a collection's persisted definition.
type stored struct {
	ID     uint32                 `json:"id"`
	Config mnemo.CollectionConfig `json:"config"`
}

func (db *DB) loadCollections() error {
	prefix := []byte{tagConfig}
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[1:])
		var s stored
		if err := json.Unmarshal(it.Value(), &s); err != nil || s.Config.Validate() != nil {
			return fmt.Errorf("%w: collection %q: config cannot be read", ErrCorrupt, name)
		}
		c, err := db.newCollection(name, s.ID, s.Config)
		if err != nil {
			return err
		}
		if err := db.checkSeqMark(c); err != nil {
			return err
		}
		if err := c.load(); err != nil {
			return err
		}
		db.collections[name] = c
	}
	return it.Error()
}

// openSeqMark checks that no collection the mark names was lost and
// starts a fresh mark from the collections' logs.
func (db *DB) openSeqMark() error {
	next, err := db.nextCollectionID()
	if err != nil {
		return err
	}
	if err := db.checkLostCollections(next); err != nil {
		return err
	}
	seqs := make(map[uint32]uint64, len(db.collections))
	for cid, seq := range db.markAtOpen {
		if seq == seqDropped {
			seqs[cid] = seq
		}
	}
	for _, c := range db.collections {
		seqs[c.id] = c.log.LastSeq()
	}
	if db.readOnly != nil {
		return nil
	}
	m, err := openSeqMark(db.fs, db.fs.PathJoin(db.dir, seqMarkFile), seqs)
	if err != nil {
		return writeError("open "+seqMarkFile, err)
	}
	db.mark = m
	return nil
}

// markAcked advances the sequence mark after a synced commit; failing to
// write it only weakens the check at the next Open.
func (db *DB) markAcked(cid uint32, seq uint64) {
	if db.opts.NoSync {
		return
	}
	if err := db.mark.advance(cid, seq); err != nil {
		db.logger.Warn("sequence mark not advanced; the next Open checks less", "err", err)
	}
}

// removeStrayFiles deletes checkpoint files no descriptor names (left by a
// crash between checkpoint steps).
func (db *DB) removeStrayFiles() {
	names, err := db.fs.List(db.cpPath)
	if err != nil {
		return
	}
	keep := map[string]bool{}
	for _, c := range db.collections {
		if d, _, _ := db.readDesc(c.id); d != nil {
			keep[d.File] = true
		}
	}
	for _, n := range names {
		if !keep[n] {
			if err := db.fs.Remove(db.fs.PathJoin(db.cpPath, n)); err == nil {
				db.logger.Info("removed stray checkpoint file", "file", n)
			}
		}
	}
}

func (db *DB) newCollection(name string, id uint32, cfg mnemo.CollectionConfig) (*Collection, error) {
	l, err := wal.Open(db.pdb, cidPrefix(tagLog, id))
	if err != nil {
		return nil, fmt.Errorf("engine: collection %q: %w", name, err)
	}
	c := &Collection{
		db: db, id: id, cfg: cfg.WithDefaults(), log: l,
		ids: make(map[string]uint64), keys: make(map[uint64]string),
		meta: make(map[uint64]map[string]any), content: make(map[uint64]string), fields: newFieldIndex(),
	}
	c.name.Store(&name)
	if !c.cfg.Text.Disabled {
		c.text = bm25.New()
	}
	return c, nil
}

// enter registers an operation in flight; the returned function ends it.
func (db *DB) enter() (func(), error) {
	db.lifeMu.Lock()
	if db.closed.Load() {
		db.lifeMu.Unlock()
		return nil, mnemo.ErrClosed
	}
	db.inflight.Add(1)
	db.lifeMu.Unlock()
	if err := db.fail.get(); err != nil {
		db.inflight.Done()
		return nil, err
	}
	return db.inflight.Done, nil
}

// commit commits b after checking that the database takes writes and has
// the free space for it; what names the write in errors, collection the
// collection it is for in metrics ("" for the database's own).
func (db *DB) commit(b *pebble.Batch, opts *pebble.WriteOptions, collection, what string) error {
	if err := db.fail.get(); err != nil {
		return err
	}
	if db.readOnly != nil {
		return db.readOnly
	}
	if err := db.space.reserve(b.Len()); err != nil {
		return err
	}
	t := telemetry.Start(db.rec)
	err := guard(func() error { return b.Commit(opts) })
	if err != nil {
		err = writeError(what, err)
	}
	if t.On() {
		e := metrics.Event{Op: metrics.OpCommit, Collection: collection, Bytes: int64(b.Len()), Err: err}
		t.Done(e)
		if opts.Sync {
			e.Op = metrics.OpSync
			t.Done(e)
		}
	}
	return err
}

// CreateCollection creates a collection, or returns the existing one when
// its config is the same (defaults applied); a different config is
// ErrCollectionExists.
func (db *DB) CreateCollection(ctx context.Context, name string, cfg mnemo.CollectionConfig) (*Collection, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := mnemo.CheckCollectionName(name); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	db.mu.Lock()
	defer db.mu.Unlock()
	if c, ok := db.collections[name]; ok {
		if !c.cfg.Equal(cfg) {
			return nil, fmt.Errorf("%w: %q has %+v, asked for %+v", mnemo.ErrCollectionExists, name, c.cfg, cfg)
		}
		return c, nil
	}
	id, err := db.nextCollectionID()
	if err != nil {
		return nil, err
	}
	js, _ := json.Marshal(stored{ID: id, Config: cfg})
	b := db.pdb.NewBatch()
	defer b.Close()
	var next [4]byte
	binary.BigEndian.PutUint32(next[:], id+1)
	b.Set(keyNextCollection, next[:], nil)
	b.Set(configKey(name), js, nil)
	if err := db.commit(b, pebble.Sync, "", fmt.Sprintf("create %q", name)); err != nil {
		return nil, err
	}
	c, err := db.newCollection(name, id, cfg)
	if err != nil {
		return nil, err
	}
	if c.idx, err = newIndex(cfg); err != nil {
		return nil, err
	}
	c.loadInfo.how = "empty"
	db.collections[name] = c
	db.markAcked(id, 0)
	return c, nil
}

func (db *DB) nextCollectionID() (uint32, error) {
	v, closer, err := db.pdb.Get(keyNextCollection)
	if errors.Is(err, pebble.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 4 {
		return 0, fmt.Errorf("%w: next collection id has %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint32(v), nil
}

// Collection returns the named collection.
func (db *DB) Collection(name string) (*Collection, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	db.mu.Lock()
	defer db.mu.Unlock()
	c, ok := db.collections[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, name)
	}
	return c, nil
}

// Collections returns the names of all collections, sorted.
func (db *DB) Collections() []string {
	db.mu.Lock()
	defer db.mu.Unlock()
	names := make([]string, 0, len(db.collections))
	for n := range db.collections {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DropCollection deletes a collection and all its records, waiting for
// writes in flight. Its *Collection values become unusable.
func (db *DB) DropCollection(ctx context.Context, name string) error {
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	c, ok := db.collections[name]
	if !ok {
		return fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, name)
	}
	db.cpMu.Lock()
	defer db.cpMu.Unlock()
	c.writes.Lock()
	defer c.writes.Unlock()
	desc, _, _ := db.readDesc(c.id)
	b := db.pdb.NewBatch()
	defer b.Close()
	b.Delete(configKey(name), nil)
	for _, tag := range []byte{tagRecord, tagLog, tagText} {
		p := cidPrefix(tag, c.id)
		b.DeleteRange(p, prefixEnd(p), nil)
	}
	b.Delete(checkpointKey(c.id), nil)
	b.Delete(sequenceKey(c.id), nil)
	if err := db.commit(b, pebble.Sync, "", fmt.Sprintf("drop %q", name)); err != nil {
		return err
	}
	c.dropped.Store(true)
	delete(db.collections, name)
	if err := db.mark.dropped(c.id); err != nil {
		db.logger.Warn("sequence mark not updated for a dropped collection", "collection", name, "err", err)
	}
	if desc != nil {
		db.fs.Remove(db.fs.PathJoin(db.cpPath, desc.File))
	}
	return nil
}

// requestCheckpoint asks the background checkpointer to checkpoint c; a
// full queue drops the request (the next write asks again).
func (db *DB) requestCheckpoint(c *Collection) {
	select {
	case db.cpReq <- c:
	default:
	}
}

// checkpointer is the DB's one background goroutine. It checkpoints
// collections whose log has grown past Options.CheckpointEvery; Close stops
// it (closing cpStop) and waits for it (cpDone).
func (db *DB) checkpointer() {
	defer close(db.cpDone)
	for {
		select {
		case <-db.cpStop:
			return
		case c := <-db.cpReq:
			if c.dropped.Load() || c.sinceCheckpoint.Load() < int64(db.opts.CheckpointEvery) {
				continue
			}
			done, err := c.enter()
			if err != nil {
				continue
			}
			if err := c.checkpoint(); err != nil {
				db.logger.Error("background checkpoint failed", "collection", c.Name(), "err", err)
			}
			done()
		}
	}
}

// Close stops live access (requests in flight are cancelled and waited
// for, a few seconds at most), waits for operations in flight, stops the
// background checkpointer,
// checkpoints every collection with unsaved changes, and closes the
// database. Further use returns ErrClosed. Closing twice returns ErrClosed.
func (db *DB) Close() error {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed.Load() {
		return mnemo.ErrClosed
	}
	if db.live != nil {
		db.live.stop()
	}
	close(db.cpStop)
	<-db.cpDone
	db.lifeMu.Lock()
	db.closed.Store(true)
	db.lifeMu.Unlock()
	db.inflight.Wait()
	var errs []error
	for _, name := range db.Collections() {
		c := db.collections[name]
		if db.fail.get() != nil || db.readOnly != nil || !(c.sinceCheckpoint.Load() > 0 || c.loadInfo.replayed > 0) {
			continue
		}
		switch err := c.checkpoint(); {
		case errors.Is(err, ErrNoSpace):
			// The log holds everything: the next Open replays it.
			db.logger.Warn("close: checkpoint not written; the next Open replays the log", "collection", name, "err", err)
		case err != nil:
			errs = append(errs, err)
		}
	}
	if err := db.fail.get(); err != nil {
		errs = append(errs, err)
	} else if db.readOnly == nil && db.opts.MinFreeSpace > 0 && !db.space.low() {
		// A closed database does not need its Pebble log: what was
		// written is in its tables, so damage to a log file after a clean
		// Close loses nothing. Pebble's flush must not meet a full disk
		// (it retries forever, or panics where it cannot fail), so it
		// runs only with room above the floor.
		if err := guard(db.pdb.Flush); err != nil {
			db.logger.Warn("close: flush failed", "err", err)
		}
	}
	if err := db.mark.close(); err != nil {
		errs = append(errs, fmt.Errorf("engine: close %s: %w", seqMarkFile, err))
	}
	if err := db.closePebble(); err != nil {
		errs = append(errs, fmt.Errorf("engine: close: %w", err))
	}
	db.release()
	return errors.Join(errs...)
}

// errNotExist matches a missing file on any vfs.FS.
var errNotExist = fs.ErrNotExist
