package traces

import (
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name     string
		env      map[string]string
		endpoint string
		protocol string
		check    func(t *testing.T, c Config)
		problem  string // a variable the error must name
	}{
		{name: "unset", env: nil, endpoint: ""},
		{name: "base URL gets /v1/traces", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, endpoint: "http://c:4318/v1/traces", protocol: HTTPProtobuf},
		{name: "base URL with a path", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c/otlp/"}, endpoint: "https://c/otlp/v1/traces"},
		{name: "traces endpoint wins, as given", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:9/x"}, endpoint: "http://t:9/x"},
		{name: "grpc keeps the base", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, endpoint: "http://c:4317", protocol: GRPC},
		{name: "traces protocol overrides", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, endpoint: "http://c:4318/v1/traces", protocol: HTTPJSON},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, endpoint: ""},
		{name: "exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, endpoint: ""},
		{name: "headers merged and decoded", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b,x=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x=2"},
			endpoint: "http://c:4318/v1/traces", check: func(t *testing.T, c Config) {
				if c.Headers["api-key"] != "a b" || c.Headers["x"] != "2" {
					t.Errorf("headers %v", c.Headers)
				}
			}},
		{name: "sampler and ratio", env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}, check: func(t *testing.T, c Config) {
			if c.Sampler != "parentbased_traceidratio" || c.SamplerArg != 0.25 {
				t.Errorf("sampler %s %v", c.Sampler, c.SamplerArg)
			}
		}},
		{name: "ratio out of range", env: map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, problem: "OTEL_TRACES_SAMPLER_ARG"},
		{name: "endpoint without scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:4318"}, problem: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "headers malformed, value not echoed", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "s3cr3t"}, problem: "OTEL_EXPORTER_OTLP_HEADERS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := envconfig.New(func(k string) string { return tc.env[k] })
			c := FromEnv(r)
			err := r.Err()
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("error %v, want one naming %s", err, tc.problem)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("a header value was echoed: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Endpoint != tc.endpoint || c.Enabled() != (tc.endpoint != "") {
				t.Errorf("endpoint %q (enabled %v), want %q", c.Endpoint, c.Enabled(), tc.endpoint)
			}
			if tc.protocol != "" && c.Protocol != tc.protocol {
				t.Errorf("protocol %q, want %q", c.Protocol, tc.protocol)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}
