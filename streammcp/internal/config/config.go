// Package config reads streammcp's STREAM_* environment variables into a
// validated Config. Every problem is collected by the shared envconfig
// reader so that start-up names all bad variables at once (exit status 2).
package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Config is streammcp's own configuration.
type Config struct {
	Brokers         []string
	ClientID        string
	KafkaVersion    sarama.KafkaVersion
	SASLMechanism   string // "", PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
	SASLUsername    string
	SASLPassword    string
	TLSEnabled      bool
	TLSCAFile       string
	TLSCertFile     string
	TLSKeyFile      string
	TLSServerName   string
	TLSInsecureSkip bool
	TLS             *tls.Config // built when TLSEnabled
	Timeout         time.Duration
	LagThreshold    int64
	ExpectedBrokers []int32
	// AllowWrites is true when any cluster allows writes: the write tools
	// are registered, and each cluster's own switch decides per call.
	AllowWrites   bool
	WriteTopics   []string // glob allowlist for write tools (empty: any topic)
	WriteGroups   []string // glob allowlist for write tools (empty: any group)
	WatchInterval time.Duration
	// Clusters lists every configured cluster, the default one first. The
	// connection fields above are the default cluster's (Clusters[0]).
	Clusters []Cluster
}

// Cluster is one Kafka cluster of the fleet: its name and the settings
// read from STREAM_<NAME>_* with fallback to the unprefixed variables.
type Cluster struct {
	Name string
	// VarPrefix is STREAM_<NAME>_ when STREAM_CLUSTERS named the cluster,
	// "" for the one default cluster: error hints name its variables.
	VarPrefix       string
	Brokers         []string
	SASLMechanism   string
	SASLUsername    string
	SASLPassword    string
	TLSEnabled      bool
	TLS             *tls.Config
	ExpectedBrokers []int32
	LagThreshold    int64
	Writes          Writes
}

// Writes is what the write tools may do on one cluster, with the variables
// that said so (named in refusals).
type Writes struct {
	Allowed bool
	// Topics and Groups are glob allowlists (path.Match syntax, e.g.
	// orders-*); empty allows everything.
	Topics, Groups []string
	// AllowedVar, TopicsVar and GroupsVar are the variables read:
	// STREAM_<NAME>_X when set, else STREAM_X.
	AllowedVar, TopicsVar, GroupsVar string
}

// clusterVars are the variables a cluster may override with
// STREAM_<NAME>_<rest>; the others are fleet-wide.
var clusterVars = []string{
	"STREAM_BROKERS", "STREAM_SASL_MECHANISM", "STREAM_SASL_USERNAME", "STREAM_SASL_PASSWORD",
	"STREAM_TLS_ENABLED", "STREAM_TLS_CA_FILE", "STREAM_TLS_CERT_FILE", "STREAM_TLS_KEY_FILE",
	"STREAM_TLS_SERVER_NAME", "STREAM_TLS_INSECURE_SKIP_VERIFY", "STREAM_EXPECTED_BROKERS", "STREAM_LAG_THRESHOLD",
	"STREAM_ALLOW_WRITES", "STREAM_WRITE_TOPICS", "STREAM_WRITE_GROUPS",
}

// Clusters is streammcp's member grammar: STREAM_CLUSTERS names the
// clusters, each reads STREAM_<NAME>_* for clusterVars, and a call without
// cluster uses the first.
var Clusters = envconfig.Members{Prefix: "STREAM", List: "CLUSTERS", Noun: "cluster", Own: clusterVars, Target: envconfig.FirstMember}

// Fleet is the clusters named, in order, as Clusters resolves a tool's
// cluster argument against them.
func Fleet(names []string) *envconfig.Fleet {
	list := strings.Join(names, ",")
	return Clusters.Read(envconfig.New(func(k string) string {
		if k == Clusters.ListVar() {
			return list
		}
		return ""
	}))
}

// VarPrefix returns the prefix of a cluster's own variables: STREAM_PROD_EU_
// for prod-eu.
func VarPrefix(cluster string) string {
	return strings.TrimSuffix(ClusterVar(cluster, "STREAM_X"), "X")
}

// ClusterVar returns the per-cluster name of an unprefixed variable:
// ClusterVar("prod", "STREAM_BROKERS") is STREAM_PROD_BROKERS.
func ClusterVar(cluster, name string) string {
	return Clusters.Var(cluster, name)
}

// DefaultKafkaVersion is assumed when STREAM_KAFKA_VERSION is unset.
const DefaultKafkaVersion = "4.0.0"

// Vars documents every STREAM_* variable for --help and the README.
var Vars = []envconfig.Var{
	{Name: "STREAM_CLUSTERS", Description: "comma-separated cluster names (letters, digits, - and _, first a letter or digit, at most 63), e.g. prod,staging; the first is the default cluster. Each cluster reads STREAM_<NAME>_BROKERS, _SASL_*, _TLS_*, _EXPECTED_BROKERS, _LAG_THRESHOLD, _ALLOW_WRITES, _WRITE_TOPICS and _WRITE_GROUPS (NAME upper-cased, - as _), falling back to the unprefixed variables. Unset: one cluster named default"},
	{Name: "STREAM_BROKERS", Required: true, Description: "required: comma-separated Kafka bootstrap brokers, host:port"},
	{Name: "STREAM_CLIENT_ID", Default: "streammcp", Description: "Kafka client id"},
	{Name: "STREAM_KAFKA_VERSION", Default: DefaultKafkaVersion, Description: "protocol version sarama assumes (3.0+ for one multi-group offset fetch per broker; requests are negotiated down per broker)"},
	{Name: "STREAM_SASL_MECHANISM", Description: "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (unset: no SASL)"},
	{Name: "STREAM_SASL_USERNAME", Description: "SASL user (required with a mechanism)"},
	{Name: "STREAM_SASL_PASSWORD", Secret: true, Description: "SASL password (never logged)"},
	{Name: "STREAM_TLS_ENABLED", Default: "false", Description: "connect to brokers with TLS"},
	{Name: "STREAM_TLS_CA_FILE", Description: "PEM CA bundle to verify brokers (default: system roots)"},
	{Name: "STREAM_TLS_CERT_FILE", Description: "PEM client certificate for mutual TLS (with STREAM_TLS_KEY_FILE)"},
	{Name: "STREAM_TLS_KEY_FILE", Description: "PEM client key for mutual TLS (with STREAM_TLS_CERT_FILE)"},
	{Name: "STREAM_TLS_SERVER_NAME", Description: "name to verify in broker certificates (default: the broker host)"},
	{Name: "STREAM_TLS_INSECURE_SKIP_VERIFY", Default: "false", Description: "skip broker certificate verification (testing only)"},
	{Name: "STREAM_TIMEOUT", Default: "10s", Description: "time limit for one report or tool call against Kafka"},
	{Name: "STREAM_LAG_THRESHOLD", Default: "1000", Description: "messages of lag above which a partition makes its group high-lag (lag report default and health-check)"},
	{Name: "STREAM_EXPECTED_BROKERS", Description: "comma-separated broker ids that should be live; missing ones are reported offline"},
	{Name: "STREAM_ALLOW_WRITES", Default: "false", Description: "allow the write tools (produce, topic and group changes, offset resets); per cluster STREAM_<NAME>_ALLOW_WRITES"},
	{Name: "STREAM_WRITE_TOPICS", Description: "comma-separated globs of the topics write tools may touch, e.g. orders-*,payments (unset: any topic); per cluster STREAM_<NAME>_WRITE_TOPICS"},
	{Name: "STREAM_WRITE_GROUPS", Description: "comma-separated globs of the consumer groups write tools may touch, e.g. payments-* (unset: any group); per cluster STREAM_<NAME>_WRITE_GROUPS"},
	{Name: "STREAM_WATCH_INTERVAL", Default: "30s", Description: "how often subscribed reports are re-read to notify changes"},
}

// FromEnv reads and validates the STREAM_* variables; problems are recorded
// in r (see r.Err). Without STREAM_CLUSTERS there is one cluster named
// default, read from the unprefixed variables.
func FromEnv(r *envconfig.Reader) Config {
	f := Clusters.Read(r)
	var c Config
	for i, name := range f.Names {
		m := f.Member(name)
		cc := fromEnv(m.Reader)
		m.Done()
		if i == 0 {
			c = cc
		}
		cl := cc.cluster(name, m)
		if f.Named {
			cl.VarPrefix = VarPrefix(name)
		}
		c.Clusters = append(c.Clusters, cl)
	}
	c.AllowWrites = slices.ContainsFunc(c.Clusters, func(cl Cluster) bool { return cl.Writes.Allowed })
	return c
}

// cluster is c's settings as cluster name, read through m.
func (c Config) cluster(name string, m *envconfig.Member) Cluster {
	// read names the variable a write refusal points at: the cluster's
	// own when it is set, else the unprefixed one it fell back to.
	read := func(v string) string {
		if own := m.Var(v); strings.TrimSpace(m.Lookup(own)) != "" {
			return own
		}
		return v
	}
	return Cluster{
		Name: name, Brokers: c.Brokers, SASLMechanism: c.SASLMechanism, SASLUsername: c.SASLUsername, SASLPassword: c.SASLPassword,
		TLSEnabled: c.TLSEnabled, TLS: c.TLS, ExpectedBrokers: c.ExpectedBrokers, LagThreshold: c.LagThreshold,
		Writes: Writes{
			Allowed: c.AllowWrites, Topics: c.WriteTopics, Groups: c.WriteGroups,
			AllowedVar: read("STREAM_ALLOW_WRITES"), TopicsVar: read("STREAM_WRITE_TOPICS"), GroupsVar: read("STREAM_WRITE_GROUPS"),
		},
	}
}

// fromEnv reads one cluster's worth of variables from r.
func fromEnv(r *envconfig.Reader) Config {
	c := Config{
		ClientID:        r.String("STREAM_CLIENT_ID", "streammcp"),
		SASLMechanism:   r.Enum("STREAM_SASL_MECHANISM", "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
		SASLUsername:    r.String("STREAM_SASL_USERNAME", ""),
		SASLPassword:    r.Secret("STREAM_SASL_PASSWORD"),
		TLSEnabled:      r.Bool("STREAM_TLS_ENABLED", false),
		TLSCAFile:       r.String("STREAM_TLS_CA_FILE", ""),
		TLSCertFile:     r.String("STREAM_TLS_CERT_FILE", ""),
		TLSKeyFile:      r.String("STREAM_TLS_KEY_FILE", ""),
		TLSServerName:   r.String("STREAM_TLS_SERVER_NAME", ""),
		TLSInsecureSkip: r.Bool("STREAM_TLS_INSECURE_SKIP_VERIFY", false),
		Timeout:         r.Duration("STREAM_TIMEOUT", 10*time.Second, 100*time.Millisecond),
		LagThreshold:    r.Int64("STREAM_LAG_THRESHOLD", 1000, 0, 1<<62),
		AllowWrites:     r.Bool("STREAM_ALLOW_WRITES", false),
		WatchInterval:   r.Duration("STREAM_WATCH_INTERVAL", 30*time.Second, time.Second),
	}
	c.Brokers = brokers(r)
	c.WriteTopics = globs(r, "STREAM_WRITE_TOPICS", "orders-*,payments")
	c.WriteGroups = globs(r, "STREAM_WRITE_GROUPS", "payments-*")
	c.KafkaVersion = kafkaVersion(r)
	c.ExpectedBrokers = expected(r)
	if c.SASLMechanism != "" {
		if c.SASLUsername == "" {
			r.Fail("STREAM_SASL_USERNAME", "", "required when STREAM_SASL_MECHANISM is set")
		}
		if c.SASLPassword == "" {
			r.Fail("STREAM_SASL_PASSWORD", "", "required when STREAM_SASL_MECHANISM is set")
		}
	}
	if c.TLSEnabled {
		c.TLS = tlsConfig(r, c)
	} else if c.TLSCAFile != "" || c.TLSCertFile != "" || c.TLSKeyFile != "" {
		r.Fail("STREAM_TLS_ENABLED", r.Lookup("STREAM_TLS_ENABLED"), "true when STREAM_TLS_CA_FILE, STREAM_TLS_CERT_FILE or STREAM_TLS_KEY_FILE is set")
	}
	return c
}

func brokers(r *envconfig.Reader) []string {
	raw := r.Lookup("STREAM_BROKERS")
	list := r.List("STREAM_BROKERS", nil)
	if len(list) == 0 {
		r.Fail("STREAM_BROKERS", "", "required: comma-separated host:port list, e.g. localhost:9092")
		return nil
	}
	for _, b := range list {
		host, port, err := net.SplitHostPort(b)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			r.Fail("STREAM_BROKERS", raw, "comma-separated host:port list with ports 1-65535, e.g. kafka-1:9092,kafka-2:9092")
			return nil
		}
	}
	return list
}

// globs reads a comma-separated glob allowlist (path.Match syntax).
func globs(r *envconfig.Reader, name, example string) []string {
	raw := r.Lookup(name)
	list := r.List(name, nil)
	for _, g := range list {
		if _, err := path.Match(g, ""); err != nil {
			r.Fail(name, raw, fmt.Sprintf("comma-separated globs (* any characters, ? one, [a-z] a class), e.g. %s; %q is not a valid glob", example, g))
			return nil
		}
	}
	return list
}

func kafkaVersion(r *envconfig.Reader) sarama.KafkaVersion {
	v := r.String("STREAM_KAFKA_VERSION", DefaultKafkaVersion)
	kv, err := sarama.ParseKafkaVersion(v)
	if err != nil {
		r.Fail("STREAM_KAFKA_VERSION", v, fmt.Sprintf("a Kafka version sarama knows, from %s to %s (e.g. 3.7.0)", sarama.MinVersion, sarama.MaxVersion))
		return sarama.V4_0_0_0
	}
	return kv
}

func expected(r *envconfig.Reader) []int32 {
	raw := r.Lookup("STREAM_EXPECTED_BROKERS")
	var out []int32
	for _, s := range r.List("STREAM_EXPECTED_BROKERS", nil) {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			r.Fail("STREAM_EXPECTED_BROKERS", raw, "comma-separated non-negative broker ids, e.g. 1,2,3")
			return nil
		}
		out = append(out, int32(n))
	}
	return out
}

func tlsConfig(r *envconfig.Reader, c Config) *tls.Config {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName, InsecureSkipVerify: c.TLSInsecureSkip} //nolint:gosec // opt-in, documented as testing only
	if c.TLSCAFile != "" {
		pem, err := os.ReadFile(c.TLSCAFile)
		if err != nil {
			r.Fail("STREAM_TLS_CA_FILE", c.TLSCAFile, "a readable PEM file ("+strings.TrimPrefix(err.Error(), "open "+c.TLSCAFile+": ")+")")
		} else {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				r.Fail("STREAM_TLS_CA_FILE", c.TLSCAFile, "a PEM file holding at least one CA certificate")
			}
			t.RootCAs = pool
		}
	}
	switch {
	case c.TLSCertFile != "" && c.TLSKeyFile != "":
		cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			r.Fail("STREAM_TLS_CERT_FILE", c.TLSCertFile, "a PEM certificate matching STREAM_TLS_KEY_FILE ("+err.Error()+")")
		} else {
			t.Certificates = []tls.Certificate{cert}
		}
	case c.TLSCertFile != "":
		r.Fail("STREAM_TLS_KEY_FILE", "", "required with STREAM_TLS_CERT_FILE")
	case c.TLSKeyFile != "":
		r.Fail("STREAM_TLS_CERT_FILE", "", "required with STREAM_TLS_KEY_FILE")
	}
	return t
}
