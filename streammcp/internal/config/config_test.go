package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func read(env map[string]string) (Config, error) {
	r := envconfig.New(func(k string) string { return env[k] })
	c := FromEnv(r)
	return c, r.Err()
}

func TestDefaults(t *testing.T) {
	c, err := read(map[string]string{"STREAM_BROKERS": "k1:9092, k2:9093"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Brokers: []string{"k1:9092", "k2:9093"}, ClientID: "streammcp", KafkaVersion: sarama.V4_0_0_0,
		Timeout: 10 * time.Second, LagThreshold: 1000, WatchInterval: 30 * time.Second,
		Clusters: []Cluster{{Name: "default", Brokers: []string{"k1:9092", "k2:9093"}, LagThreshold: 1000, Writes: unprefixedWrites}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestValid(t *testing.T) {
	c, err := read(map[string]string{
		"STREAM_BROKERS": "k1:9092", "STREAM_KAFKA_VERSION": "3.7.0", "STREAM_SASL_MECHANISM": "scram-sha-512",
		"STREAM_SASL_USERNAME": "u", "STREAM_SASL_PASSWORD": " p w ", "STREAM_TIMEOUT": "2", "STREAM_LAG_THRESHOLD": "0",
		"STREAM_EXPECTED_BROKERS": "1,2,3", "STREAM_ALLOW_WRITES": "yes", "STREAM_WATCH_INTERVAL": "1m",
		"STREAM_TLS_ENABLED": "true", "STREAM_TLS_SERVER_NAME": "kafka.internal", "STREAM_TLS_INSECURE_SKIP_VERIFY": "on",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.SASLMechanism != "SCRAM-SHA-512" || c.SASLPassword != " p w " || c.Timeout != 2*time.Second || c.LagThreshold != 0 ||
		!reflect.DeepEqual(c.ExpectedBrokers, []int32{1, 2, 3}) || !c.AllowWrites || c.WatchInterval != time.Minute ||
		c.KafkaVersion != sarama.V3_7_0_0 || c.TLS == nil || c.TLS.ServerName != "kafka.internal" || !c.TLS.InsecureSkipVerify {
		t.Fatalf("got %+v", c)
	}
}

func TestEveryBadVariableIsNamed(t *testing.T) {
	_, err := read(map[string]string{
		"STREAM_BROKERS": "nohost", "STREAM_KAFKA_VERSION": "banana", "STREAM_SASL_MECHANISM": "GSSAPI",
		"STREAM_TIMEOUT": "soon", "STREAM_LAG_THRESHOLD": "-5", "STREAM_EXPECTED_BROKERS": "1,x",
		"STREAM_ALLOW_WRITES": "maybe", "STREAM_WATCH_INTERVAL": "0s", "STREAM_TLS_ENABLED": "sure",
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, v := range []string{"STREAM_BROKERS", "STREAM_KAFKA_VERSION", "STREAM_SASL_MECHANISM", "STREAM_TIMEOUT", "STREAM_LAG_THRESHOLD",
		"STREAM_EXPECTED_BROKERS", "STREAM_ALLOW_WRITES", "STREAM_WATCH_INTERVAL", "STREAM_TLS_ENABLED"} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error does not name %s:\n%v", v, err)
		}
	}
}

func TestProblems(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not pem"), 0o600)
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"missing brokers", map[string]string{}, []string{"STREAM_BROKERS: not set"}},
		{"bad port", map[string]string{"STREAM_BROKERS": "k:0"}, []string{"STREAM_BROKERS"}},
		{"sasl without credentials", map[string]string{"STREAM_BROKERS": "k:1", "STREAM_SASL_MECHANISM": "PLAIN"}, []string{"STREAM_SASL_USERNAME", "STREAM_SASL_PASSWORD"}},
		{"tls files without tls", map[string]string{"STREAM_BROKERS": "k:1", "STREAM_TLS_CA_FILE": junk}, []string{"STREAM_TLS_ENABLED"}},
		{"unreadable CA", map[string]string{"STREAM_BROKERS": "k:1", "STREAM_TLS_ENABLED": "1", "STREAM_TLS_CA_FILE": filepath.Join(dir, "nope.pem")}, []string{"STREAM_TLS_CA_FILE"}},
		{"CA without certificates", map[string]string{"STREAM_BROKERS": "k:1", "STREAM_TLS_ENABLED": "1", "STREAM_TLS_CA_FILE": junk}, []string{"STREAM_TLS_CA_FILE"}},
		{"cert without key", map[string]string{"STREAM_BROKERS": "k:1", "STREAM_TLS_ENABLED": "1", "STREAM_TLS_CERT_FILE": junk}, []string{"STREAM_TLS_KEY_FILE"}},
		{"bad key pair", map[string]string{"STREAM_BROKERS": "k:1", "STREAM_TLS_ENABLED": "1", "STREAM_TLS_CERT_FILE": junk, "STREAM_TLS_KEY_FILE": junk}, []string{"STREAM_TLS_CERT_FILE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(tt.env)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestTLSFiles(t *testing.T) {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	c, err := read(map[string]string{"STREAM_BROKERS": "k:1", "STREAM_TLS_ENABLED": "true", "STREAM_TLS_CA_FILE": certFile, "STREAM_TLS_CERT_FILE": certFile, "STREAM_TLS_KEY_FILE": keyFile})
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS.RootCAs == nil || len(c.TLS.Certificates) != 1 {
		t.Fatalf("tls config %+v", c.TLS)
	}
}

func TestPasswordNeverEchoed(t *testing.T) {
	_, err := read(map[string]string{"STREAM_BROKERS": "bad", "STREAM_SASL_MECHANISM": "PLAIN", "STREAM_SASL_PASSWORD": "hunter2"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
}

var unprefixedWrites = Writes{AllowedVar: "STREAM_ALLOW_WRITES", TopicsVar: "STREAM_WRITE_TOPICS", GroupsVar: "STREAM_WRITE_GROUPS"}

// TestWritesPerCluster: each cluster's write switch and allowlists fall
// back to the unprefixed variables, and remember which variable decided.
func TestWritesPerCluster(t *testing.T) {
	c, err := read(map[string]string{
		"STREAM_CLUSTERS": "prod,staging,dev", "STREAM_BROKERS": "k:9092",
		"STREAM_ALLOW_WRITES": "true", "STREAM_WRITE_GROUPS": "team-*",
		"STREAM_PROD_ALLOW_WRITES":    "false",
		"STREAM_STAGING_WRITE_TOPICS": "orders-*, payments",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Writes{
		{Allowed: false, Groups: []string{"team-*"}, AllowedVar: "STREAM_PROD_ALLOW_WRITES", TopicsVar: "STREAM_WRITE_TOPICS", GroupsVar: "STREAM_WRITE_GROUPS"},
		{Allowed: true, Topics: []string{"orders-*", "payments"}, Groups: []string{"team-*"}, AllowedVar: "STREAM_ALLOW_WRITES", TopicsVar: "STREAM_STAGING_WRITE_TOPICS", GroupsVar: "STREAM_WRITE_GROUPS"},
		{Allowed: true, Groups: []string{"team-*"}, AllowedVar: "STREAM_ALLOW_WRITES", TopicsVar: "STREAM_WRITE_TOPICS", GroupsVar: "STREAM_WRITE_GROUPS"},
	}
	for i, cl := range c.Clusters {
		if !reflect.DeepEqual(cl.Writes, want[i]) {
			t.Errorf("%s: %+v, want %+v", cl.Name, cl.Writes, want[i])
		}
	}
	if !c.AllowWrites {
		t.Error("AllowWrites must say some cluster allows writes")
	}
	// Only prod writable: still registered; none: not.
	c, _ = read(map[string]string{"STREAM_CLUSTERS": "prod,staging", "STREAM_BROKERS": "k:9092", "STREAM_STAGING_ALLOW_WRITES": "yes"})
	if !c.AllowWrites || c.Clusters[0].Writes.Allowed || !c.Clusters[1].Writes.Allowed {
		t.Errorf("%+v", c.Clusters)
	}
	_, err = read(map[string]string{"STREAM_CLUSTERS": "prod", "STREAM_BROKERS": "k:9092", "STREAM_PROD_WRITE_TOPICS": "orders-[", "STREAM_PROD_ALLOW_WRITES": "perhaps"})
	if err == nil || !strings.Contains(err.Error(), "STREAM_PROD_WRITE_TOPICS") || !strings.Contains(err.Error(), `"orders-[" is not a valid glob`) ||
		!strings.Contains(err.Error(), "STREAM_PROD_ALLOW_WRITES") {
		t.Fatalf("err = %v", err)
	}
}

func TestClustersFallBackToUnprefixedVariables(t *testing.T) {
	c, err := read(map[string]string{
		"STREAM_CLUSTERS": "prod, staging-eu,dev",
		"STREAM_BROKERS":  "shared:9092", "STREAM_SASL_MECHANISM": "PLAIN", "STREAM_SASL_USERNAME": "reader", "STREAM_SASL_PASSWORD": "pw",
		"STREAM_LAG_THRESHOLD": "500", "STREAM_TIMEOUT": "3s",
		"STREAM_PROD_BROKERS": "p1:9092,p2:9092", "STREAM_PROD_SASL_USERNAME": "prod-reader", "STREAM_PROD_SASL_PASSWORD": "prod-pw",
		"STREAM_PROD_EXPECTED_BROKERS": "1,2", "STREAM_PROD_LAG_THRESHOLD": "10000",
		"STREAM_STAGING_EU_BROKERS": "s1:9092", "STREAM_STAGING_EU_SASL_MECHANISM": "SCRAM-SHA-256", "STREAM_STAGING_EU_TLS_ENABLED": "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Cluster{
		{Name: "prod", VarPrefix: "STREAM_PROD_", Brokers: []string{"p1:9092", "p2:9092"}, SASLMechanism: "PLAIN", SASLUsername: "prod-reader", SASLPassword: "prod-pw", ExpectedBrokers: []int32{1, 2}, LagThreshold: 10000, Writes: unprefixedWrites},
		{Name: "staging-eu", VarPrefix: "STREAM_STAGING_EU_", Brokers: []string{"s1:9092"}, SASLMechanism: "SCRAM-SHA-256", SASLUsername: "reader", SASLPassword: "pw", TLSEnabled: true, LagThreshold: 500, Writes: unprefixedWrites},
		{Name: "dev", VarPrefix: "STREAM_DEV_", Brokers: []string{"shared:9092"}, SASLMechanism: "PLAIN", SASLUsername: "reader", SASLPassword: "pw", LagThreshold: 500, Writes: unprefixedWrites},
	}
	if c.Clusters[1].TLS == nil || c.Clusters[1].TLS.MinVersion != tls.VersionTLS12 {
		t.Fatalf("staging-eu TLS config %+v", c.Clusters[1].TLS)
	}
	c.Clusters[1].TLS = nil
	if !reflect.DeepEqual(c.Clusters, want) {
		t.Fatalf("clusters\n got %+v\nwant %+v", c.Clusters, want)
	}
	// The default cluster is the first; fleet-wide settings are shared.
	if !reflect.DeepEqual(c.Brokers, want[0].Brokers) || c.LagThreshold != 10000 || c.Timeout != 3*time.Second {
		t.Fatalf("default cluster fields %+v", c)
	}
}

func TestClusterProblemsNameTheClusterAndTheVariable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
		not  []string
	}{
		{"bad names", map[string]string{"STREAM_CLUSTERS": "prod,stag.ing", "STREAM_BROKERS": "k:1"}, []string{`STREAM_CLUSTERS="prod,stag.ing"`, `"stag.ing" is not one`}, nil},
		{"empty name", map[string]string{"STREAM_CLUSTERS": "prod,,dev", "STREAM_BROKERS": "k:1"}, []string{"STREAM_CLUSTERS", `"" is not one`}, nil},
		{"names that share variables", map[string]string{"STREAM_CLUSTERS": "prod-eu,prod_eu", "STREAM_BROKERS": "k:1"}, []string{"STREAM_CLUSTERS", "STREAM_PROD_EU_*"}, nil},
		{"missing brokers, no fallback", map[string]string{"STREAM_CLUSTERS": "prod,dev", "STREAM_PROD_BROKERS": "p:1"},
			[]string{"cluster dev: STREAM_DEV_BROKERS: not set", "or set STREAM_BROKERS"}, []string{"STREAM_PROD_BROKERS"}},
		{"bad prefixed value", map[string]string{"STREAM_CLUSTERS": "prod,dev", "STREAM_BROKERS": "k:1", "STREAM_DEV_LAG_THRESHOLD": "-1", "STREAM_DEV_BROKERS": "nohost"},
			[]string{`cluster dev: STREAM_DEV_LAG_THRESHOLD="-1": invalid`, `cluster dev: STREAM_DEV_BROKERS="nohost": invalid`}, []string{"STREAM_PROD"}},
		{"bad fallback value", map[string]string{"STREAM_CLUSTERS": "prod,dev", "STREAM_PROD_BROKERS": "p:1", "STREAM_EXPECTED_BROKERS": "x", "STREAM_PROD_EXPECTED_BROKERS": "1"},
			[]string{`cluster dev: STREAM_EXPECTED_BROKERS (used because STREAM_DEV_EXPECTED_BROKERS is unset)="x": invalid`, "STREAM_DEV_BROKERS: not set"}, []string{"cluster prod"}},
		{"sasl credentials for one cluster", map[string]string{"STREAM_CLUSTERS": "prod,dev", "STREAM_BROKERS": "k:1", "STREAM_DEV_SASL_MECHANISM": "PLAIN"},
			[]string{"cluster dev: STREAM_DEV_SASL_USERNAME: not set", "cluster dev: STREAM_DEV_SASL_PASSWORD: not set"}, []string{"cluster prod"}},
		{"fleet-wide problem named once", map[string]string{"STREAM_CLUSTERS": "prod,dev", "STREAM_BROKERS": "k:1", "STREAM_TIMEOUT": "soon"},
			[]string{"(1 problem)", `STREAM_TIMEOUT="soon"`}, []string{"cluster"}},
		{"secret never echoed", map[string]string{"STREAM_CLUSTERS": "prod", "STREAM_BROKERS": "bad", "STREAM_PROD_SASL_MECHANISM": "PLAIN", "STREAM_PROD_SASL_PASSWORD": "hunter2"},
			[]string{"STREAM_PROD_SASL_USERNAME", "STREAM_BROKERS"}, []string{"hunter2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(tt.env)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error has %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestREADMEFleetConfig reads the three-cluster configuration the README's
// Fleets section shows.
func TestREADMEFleetConfig(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "## Fleets")
	_, rest, _ = strings.Cut(rest, "```json\n")
	block, _, _ := strings.Cut(rest, "```")
	var doc struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatalf("README fleet block: %v\n%s", err, block)
	}
	c, err := read(doc.MCPServers["kafka"].Env)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		name, sasl, user string
		tls              bool
		lag              int64
		brokers          int
	}
	var g []got
	for _, cl := range c.Clusters {
		g = append(g, got{cl.Name, cl.SASLMechanism, cl.SASLUsername, cl.TLSEnabled, cl.LagThreshold, len(cl.Brokers)})
	}
	want := []got{
		{"prod", "SCRAM-SHA-512", "mcp-reader-prod", true, 20000, 3},
		{"staging", "SCRAM-SHA-512", "mcp-reader-staging", true, 5000, 1},
		{"dev", "", "", false, 5000, 1},
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("clusters %+v\nwant %+v", g, want)
	}
}
