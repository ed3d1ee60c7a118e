// Package kafka is streammcp's only door to Kafka. It speaks to brokers
// through IBM/sarama's low-level Broker API so that it alone decides the
// request plan: reports cost a fixed number of requests however many
// topics, partitions and groups the cluster has. It never imports mcp-go.
package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
	"github.com/mcpfleet/mcpfleet/shared/errkind"
)

// Options configure a Client.
type Options struct {
	Brokers  []string // seed addresses, host:port
	ClientID string
	Version  sarama.KafkaVersion
	// SASLMechanism is "", "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512".
	SASLMechanism string
	SASLUser      string
	SASLPassword  string
	TLS           *tls.Config // nil: plaintext
	// Timeout bounds one report or tool call (dial, request and response).
	Timeout time.Duration
	// Expected lists broker ids the operator expects to be live.
	Expected []int32
	Logger   *slog.Logger
	// VarPrefix is the prefix of this cluster's own variables in hints
	// (STREAM_PROD_ for STREAM_PROD_BROKERS); "" names the unprefixed ones.
	VarPrefix string
	// Recorder records every request (metric and span) under the cluster's
	// configured name; nil records nothing.
	Recorder *backendcall.Recorder
}

// Client talks to one Kafka cluster. It keeps one connection per broker
// address, opened on first use and dropped on any transport error, so a
// cluster that is down at start-up or restarts is picked up again on the
// next call. It is safe for concurrent use.
type Client struct {
	opts Options
	conf *sarama.Config
	log  *slog.Logger

	mu       sync.Mutex
	conns    map[string]*conn
	known    []string               // broker addresses from the last metadata answer
	topicIDs map[sarama.Uuid]string // topic names by id, from the last full metadata answer
}

type conn struct {
	b     *sarama.Broker
	ready chan struct{}
	err   error // connect error, valid after ready
}

// New validates opts and returns a Client. It does not contact Kafka.
func New(opts Options) (*Client, error) {
	if len(opts.Brokers) == 0 {
		return nil, errors.New("no Kafka broker address given")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	conf, err := saramaConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Client{opts: opts, conf: conf, log: opts.Logger, conns: map[string]*conn{}}, nil
}

// DefaultVersion is the protocol version assumed when none is configured:
// 4.0 enables multi-group OffsetFetch (3.0+) and fenced brokers in
// DescribeCluster; sarama negotiates each request down to what a broker
// advertises.
var DefaultVersion = sarama.V4_0_0_0

func saramaConfig(o Options) (*sarama.Config, error) {
	c := sarama.NewConfig()
	c.ClientID = o.ClientID
	if c.ClientID == "" {
		c.ClientID = "streammcp"
	}
	c.Version = o.Version
	if c.Version == (sarama.KafkaVersion{}) {
		c.Version = DefaultVersion
	}
	c.Net.DialTimeout = o.Timeout
	c.Net.ReadTimeout = o.Timeout
	c.Net.WriteTimeout = o.Timeout
	c.Net.MaxOpenRequests = 5
	c.Metadata.Retry.Max = 0
	c.Metadata.Full = false
	c.Admin.Retry.Max = 0
	c.Admin.Timeout = o.Timeout
	if o.TLS != nil {
		c.Net.TLS.Enable = true
		c.Net.TLS.Config = o.TLS
	}
	switch o.SASLMechanism {
	case "":
	case sarama.SASLTypePlaintext:
		c.Net.SASL.Enable = true
		c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	case sarama.SASLTypeSCRAMSHA256:
		c.Net.SASL.Enable = true
		c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAM(sha256Hash) }
	case sarama.SASLTypeSCRAMSHA512:
		c.Net.SASL.Enable = true
		c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAM(sha512Hash) }
	default:
		return nil, fmt.Errorf("unsupported SASL mechanism %q (accepted: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", o.SASLMechanism)
	}
	if c.Net.SASL.Enable {
		c.Net.SASL.User = o.SASLUser
		c.Net.SASL.Password = o.SASLPassword
		c.Net.SASL.Handshake = true
		c.Net.SASL.Version = sarama.SASLHandshakeV1
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("kafka client configuration: %w", err)
	}
	return c, nil
}

// SaramaConfig returns a copy of the client's sarama configuration, for
// callers (tests, producers) that need a sarama.Client of their own.
func (c *Client) SaramaConfig() *sarama.Config {
	cp := *c.conf
	return &cp
}

// Close closes every connection.
func (c *Client) Close() error {
	c.mu.Lock()
	conns := c.conns
	c.conns = map[string]*conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		go closeConn(cn)
	}
	return nil
}

func closeConn(cn *conn) {
	<-cn.ready
	cn.b.Close()
}

// broker returns a connected broker for addr, dialling when needed.
func (c *Client) broker(ctx context.Context, addr string) (*sarama.Broker, bool, error) {
	c.mu.Lock()
	cn, reused := c.conns[addr]
	if !reused {
		cn = &conn{b: sarama.NewBroker(addr), ready: make(chan struct{})}
		c.conns[addr] = cn
		go func() {
			defer close(cn.ready)
			if err := cn.b.Open(c.conf); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
				cn.err = err
				return
			}
			if ok, err := cn.b.Connected(); !ok || err != nil {
				if err == nil {
					err = sarama.ErrNotConnected
				}
				cn.err = err
			}
		}()
	}
	c.mu.Unlock()
	select {
	case <-cn.ready:
	case <-ctx.Done():
		return nil, false, ctxError(ctx, "connect to Kafka broker "+addr, c.opts.Timeout)
	}
	if cn.err != nil {
		c.drop(addr, cn.b)
		return nil, false, c.connectError(addr, cn.err)
	}
	return cn.b, reused, nil
}

// drop forgets the connection to addr (when it is still b) and closes it,
// so the next call dials again.
func (c *Client) drop(addr string, b *sarama.Broker) {
	c.mu.Lock()
	cn, ok := c.conns[addr]
	if ok && cn.b == b {
		delete(c.conns, addr)
	}
	c.mu.Unlock()
	if ok && cn.b == b {
		go closeConn(cn)
	}
}

// call runs one read request against the broker at addr, honouring ctx:
// when ctx ends first the connection is closed, which aborts the request.
// A transport error on a connection opened by an earlier call (the broker
// restarted, an idle connection was cut) is retried once on a fresh one.
func call[T any](ctx context.Context, c *Client, addr string, api API, what string, fn func(*sarama.Broker) (T, error)) (T, error) {
	v, reused, err := callOnce(ctx, c, addr, api, what, fn)
	if err != nil && reused && ctx.Err() == nil && isTransport(err) {
		c.log.Debug("retrying on a fresh connection", "broker", addr, "err", err)
		v, _, err = callOnce(ctx, c, addr, api, what, fn)
	}
	return v, err
}

// callWrite runs a request that must not be repeated (it changes the cluster).
func callWrite[T any](ctx context.Context, c *Client, addr string, api API, what string, fn func(*sarama.Broker) (T, error)) (T, error) {
	v, _, err := callOnce(ctx, c, addr, api, what, fn)
	return v, err
}

type transportError struct{ error }

func (e transportError) Unwrap() error { return e.error }

func isTransport(err error) bool {
	var t transportError
	return errors.As(err, &t)
}

func callOnce[T any](ctx context.Context, c *Client, addr string, api API, what string, fn func(*sarama.Broker) (T, error)) (v T, reused bool, err error) {
	// One recorded call per request, connecting included: a broker that
	// cannot be reached fails the request that needed it.
	_, rc := c.opts.Recorder.Start(ctx, string(api), attribute.String("kafka.broker", addr), attribute.String("kafka.request", what))
	defer func() { endCall(ctx, rc, err) }()
	var zero T
	b, reused, err := c.broker(ctx, addr)
	if err != nil {
		return zero, false, err
	}
	// A pooled connection comes back at once even for a caller that gave
	// up: nothing is sent after that.
	if ctx.Err() != nil {
		return zero, reused, ctxError(ctx, what+" to Kafka broker "+addr+" (nothing was sent)", c.opts.Timeout)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn(b)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			var kerr sarama.KError
			if !errors.As(r.err, &kerr) {
				c.drop(addr, b) // transport error: the connection is unusable
				return zero, reused, c.requestError(addr, what, transportError{r.err})
			}
			return zero, reused, c.requestError(addr, what, r.err)
		}
		return r.v, reused, nil
	case <-ctx.Done():
		c.drop(addr, b)
		return zero, reused, ctxError(ctx, what+" from Kafka broker "+addr, c.opts.Timeout)
	}
}

// API names a Kafka request by its API key name: the operation label of
// mcpfleet_backend_requests_total, a closed set.
type API string

// The Kafka APIs streammcp sends.
const (
	APIMetadata              API = "Metadata"
	APIDescribeCluster       API = "DescribeCluster"
	APIDescribeConfigs       API = "DescribeConfigs"
	APIListGroups            API = "ListGroups"
	APIDescribeGroups        API = "DescribeGroups"
	APIConsumerGroupDescribe API = "ConsumerGroupDescribe"
	APIOffsetFetch           API = "OffsetFetch"
	APIFindCoordinator       API = "FindCoordinator"
	APIListOffsets           API = "ListOffsets"
	APIFetch                 API = "Fetch"
	APICreateTopics          API = "CreateTopics"
	APIProduce               API = "Produce"
	APIOffsetCommit          API = "OffsetCommit"
	APIOffsetDelete          API = "OffsetDelete"
	APIDeleteGroups          API = "DeleteGroups"
	APIDeleteRecords         API = "DeleteRecords"
	APICreatePartitions      API = "CreatePartitions"
	APIIncrementalAlter      API = "IncrementalAlterConfigs"
	APIDeleteTopics          API = "DeleteTopics"
	APIDescribeLogDirs       API = "DescribeLogDirs"
)

// endCall ends a recorded request: a context that ended is a timeout or a
// cancellation whatever error the request returned.
func endCall(ctx context.Context, rc *backendcall.Call, err error) {
	if err != nil && ctx.Err() != nil {
		rc.SetOutcome(backendcall.Classify(ctx.Err()))
	}
	rc.End(err)
}

// ctxError explains why ctx ended.
func ctxError(ctx context.Context, op string, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errkind.New(errkind.Timeout, op, fmt.Errorf("no answer within %s", timeout),
			"check that the brokers are reachable, or raise STREAM_TIMEOUT")
	}
	return errkind.New(errkind.Canceled, op, ctx.Err(), "")
}

func (c *Client) connectError(addr string, err error) error {
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return errkind.New(errkind.Unavailable, "connect to Kafka broker "+addr, err,
			"check "+c.v("BROKERS")+" and that the broker is running and reachable")
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr):
		return errkind.New(errkind.Permission, "TLS handshake with Kafka broker "+addr, err,
			"check "+c.v("TLS_CA_FILE")+", "+c.v("TLS_SERVER_NAME")+" (or "+c.v("TLS_INSECURE_SKIP_VERIFY")+" for testing only)")
	case errors.As(err, &recordErr):
		return errkind.New(errkind.Unavailable, "TLS handshake with Kafka broker "+addr, err,
			"the listener does not speak TLS: unset "+c.v("TLS_ENABLED")+" or use the broker's TLS port")
	case c.conf.Net.SASL.Enable && isAuthFailure(err):
		return errkind.New(errkind.Permission,
			fmt.Sprintf("authenticate to Kafka broker %s with SASL %s as user %q", addr, c.conf.Net.SASL.Mechanism, c.conf.Net.SASL.User),
			fmt.Errorf("authentication failed (%v)", err),
			"check "+c.v("SASL_USERNAME")+", "+c.v("SASL_PASSWORD")+" and "+c.v("SASL_MECHANISM"))
	}
	return errkind.New(errkind.KindOf(err), "connect to Kafka broker "+addr, err,
		"check "+c.v("BROKERS")+" and the broker's listener (TLS and SASL settings must match it)")
}

// isAuthFailure recognises a SASL rejection: Kafka answers
// SASL_AUTHENTICATION_FAILED or ILLEGAL_SASL_STATE, some brokers (and
// kfake) just close the connection.
func isAuthFailure(err error) bool {
	return errors.Is(err, sarama.ErrSASLAuthenticationFailed) ||
		errors.Is(err, sarama.ErrIllegalSASLState) ||
		errors.Is(err, sarama.ErrUnsupportedSASLMechanism) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (c *Client) requestError(addr, what string, err error) error {
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return errkind.New(kerrKind(kerr), what+" from Kafka broker "+addr, fmt.Errorf("%s: %w", ErrorName(kerr), kerr), "")
	}
	var me *errkind.Error
	if errors.As(err, &me) {
		return err
	}
	return errkind.New(errkind.KindOf(err), what+" from Kafka broker "+addr, err,
		"check that the broker is running; the next call reconnects")
}

// kerrKind classifies a Kafka error code by what the caller can do about
// it: Permission when authentication or authorisation failed, NotFound for
// a topic, group or partition that does not exist, Conflict when the
// change clashes with the cluster's state (a group with members, a topic
// that exists), Invalid for a request Kafka refused as wrong, Timeout, and
// Unavailable for the rest (a broker that could not serve it).
func kerrKind(k sarama.KError) errkind.Kind {
	switch k {
	case sarama.ErrSASLAuthenticationFailed, sarama.ErrTopicAuthorizationFailed, sarama.ErrGroupAuthorizationFailed,
		sarama.ErrClusterAuthorizationFailed, sarama.ErrTransactionalIDAuthorizationFailed:
		return errkind.Permission
	case sarama.ErrUnknownTopicOrPartition, sarama.ErrGroupIDNotFound:
		return errkind.NotFound
	case sarama.ErrTopicAlreadyExists, sarama.ErrNonEmptyGroup, sarama.ErrGroupSubscribedToTopic, sarama.ErrUnknownMemberId,
		sarama.ErrIllegalGeneration, sarama.ErrRebalanceInProgress:
		return errkind.Conflict
	case sarama.ErrInvalidTopic, sarama.ErrInvalidPartitions, sarama.ErrInvalidReplicationFactor, sarama.ErrInvalidConfig,
		sarama.ErrPolicyViolation, sarama.ErrInvalidRequest:
		return errkind.Invalid
	case sarama.ErrRequestTimedOut:
		return errkind.Timeout
	}
	return errkind.Unavailable
}

// v names a per-cluster variable the way the operator sets it: STREAM_X,
// or STREAM_<NAME>_X in a fleet.
func (c *Client) v(name string) string {
	if c.opts.VarPrefix == "" {
		return "STREAM_" + name
	}
	return c.opts.VarPrefix + name
}

// SetRecorder sets the hook every request is recorded with (metric and
// span). Call it before the client is used: main builds the MCP server,
// which owns the metrics, after the clients.
func (c *Client) SetRecorder(r *backendcall.Recorder) { c.opts.Recorder = r }

// Timeout is the limit of one report or tool call (Options.Timeout).
func (c *Client) Timeout() time.Duration { return c.opts.Timeout }

// Brokers returns the configured seed addresses (host:port).
func (c *Client) Brokers() []string { return slices.Clone(c.opts.Brokers) }

// addrs lists the seed addresses then the brokers seen in metadata.
func (c *Client) addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.opts.Brokers)
	for _, a := range c.known {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// any runs fn against the first broker that answers, trying seeds first.
// Only connection failures move on to the next broker.
func anyBroker[T any](ctx context.Context, c *Client, api API, what string, fn func(*sarama.Broker) (T, error)) (T, string, error) {
	var zero T
	var errs []error
	addrs := c.addrs()
	for i, addr := range addrs {
		// Share what is left of the deadline among the remaining brokers,
		// so one silent broker cannot use up the whole time limit.
		actx, cancel := ctx, context.CancelFunc(func() {})
		if dl, ok := ctx.Deadline(); ok && i < len(addrs)-1 {
			actx, cancel = context.WithTimeout(ctx, time.Until(dl)/time.Duration(len(addrs)-i))
		}
		v, err := call(actx, c, addr, api, what, fn)
		cancel()
		if err == nil {
			return v, addr, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || errkind.KindOf(err) == errkind.Permission {
			return zero, addr, err
		}
		var kerr sarama.KError
		if errors.As(err, &kerr) {
			return zero, addr, err
		}
	}
	if len(errs) == 1 {
		return zero, "", errs[0]
	}
	// One line naming each broker tried and why it failed.
	parts := make([]string, len(errs))
	kind := errkind.KindOf(errs[0])
	for i, err := range errs {
		cause := err
		var me *errkind.Error
		if errors.As(err, &me) && me.Err != nil {
			cause = me.Err
		}
		parts[i] = addrs[i] + ": " + cause.Error()
		if errkind.KindOf(err) != kind {
			kind = errkind.Unavailable
		}
	}
	return zero, "", errkind.New(kind, what+" from Kafka", fmt.Errorf("no broker answered (%s)", strings.Join(parts, "; ")),
		"check "+c.v("BROKERS")+" and that the cluster is running and reachable")
}
