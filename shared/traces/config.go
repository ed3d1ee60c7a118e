package traces

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	HTTPProtobuf = "http/protobuf"
	HTTPJSON     = "http/json"
	GRPC         = "grpc"
)

// Vars documents the standard OpenTelemetry variables the servers read.
// The exporter's TLS, compression and timeout variables
// (OTEL_EXPORTER_OTLP_CERTIFICATE, _COMPRESSION, _TIMEOUT...) and the batch
// processor's (OTEL_BSP_*) are read by the OpenTelemetry SDK itself.
var Vars = []envconfig.Var{
	{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Description: "export traces with OTLP to this collector base URL, e.g. http://127.0.0.1:4318 (http/protobuf: /v1/traces is appended) or http://127.0.0.1:4317 (grpc); unset: no tracing, no exporter"},
	{Name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", Description: "the traces URL itself (used as given), instead of OTEL_EXPORTER_OTLP_ENDPOINT"},
	{Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Default: HTTPProtobuf, Description: "http/protobuf, http/json or grpc"},
	{Name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", Description: "the protocol for traces, instead of OTEL_EXPORTER_OTLP_PROTOCOL"},
	{Name: "OTEL_EXPORTER_OTLP_HEADERS", Description: "headers sent to the collector, key=value,key2=value2 (values URL-encoded), e.g. an API key", Secret: true},
	{Name: "OTEL_EXPORTER_OTLP_TRACES_HEADERS", Description: "more headers for traces, same form, added to OTEL_EXPORTER_OTLP_HEADERS", Secret: true},
	{Name: "OTEL_SERVICE_NAME", Description: "service.name of the spans (default: the server's name)"},
	{Name: "OTEL_RESOURCE_ATTRIBUTES", Description: "more resource attributes, key=value,... (e.g. deployment.environment=prod,service.namespace=data)"},
	{Name: "OTEL_TRACES_SAMPLER", Default: "parentbased_always_on", Description: "always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio"},
	{Name: "OTEL_TRACES_SAMPLER_ARG", Default: "1.0", Description: "the ratio (0 to 1) of the traceidratio samplers"},
	{Name: "OTEL_TRACES_EXPORTER", Default: "otlp", Description: "otlp, or none to turn tracing off while the endpoint is set"},
	{Name: "OTEL_SDK_DISABLED", Default: "false", Description: "true turns tracing off"},
}

// Config is what FromEnv read. The zero Config is off.
type Config struct {
	// Endpoint is the traces URL the exporter posts to ("" = tracing off).
	Endpoint string
	Protocol string
	Headers  map[string]string
	// ServiceName overrides the server's name as service.name.
	ServiceName string
	Resource    []attribute.KeyValue
	Sampler     string
	SamplerArg  float64
}

// Enabled reports whether spans are exported.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// FromEnv reads the OTEL_* variables, recording every problem on r.
func FromEnv(r *envconfig.Reader) Config {
	var c Config
	c.Protocol = r.Enum("OTEL_EXPORTER_OTLP_PROTOCOL", HTTPProtobuf, HTTPProtobuf, HTTPJSON, GRPC)
	if r.Lookup("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") != "" {
		c.Protocol = r.Enum("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", c.Protocol, HTTPProtobuf, HTTPJSON, GRPC)
	}
	base := r.URL("OTEL_EXPORTER_OTLP_ENDPOINT", "", "http", "https")
	traces := r.URL("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "", "http", "https")
	switch {
	case traces != nil:
		c.Endpoint = traces.String()
	case base != nil && c.Protocol != GRPC:
		// The specification: the signal path is appended to the base URL.
		u := *base
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		c.Endpoint = u.String()
	case base != nil:
		c.Endpoint = base.String()
	}
	c.Headers = headers(r, "OTEL_EXPORTER_OTLP_HEADERS", nil)
	c.Headers = headers(r, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", c.Headers)
	c.ServiceName = r.String("OTEL_SERVICE_NAME", "")
	c.Resource = resourceAttrs(r)
	c.Sampler = r.Enum("OTEL_TRACES_SAMPLER", "parentbased_always_on",
		"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio")
	c.SamplerArg = 1
	if v := r.Lookup("OTEL_TRACES_SAMPLER_ARG"); v != "" && strings.HasSuffix(c.Sampler, "traceidratio") {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			r.Fail("OTEL_TRACES_SAMPLER_ARG", v, "a ratio from 0 to 1, e.g. 0.25")
		} else {
			c.SamplerArg = f
		}
	}
	exporter := r.Enum("OTEL_TRACES_EXPORTER", "otlp", "otlp", "none")
	if exporter == "none" || r.Bool("OTEL_SDK_DISABLED", false) {
		c.Endpoint = ""
	}
	return c
}

// headers parses key=value,... (values URL-encoded) into into.
func headers(r *envconfig.Reader, name string, into map[string]string) map[string]string {
	v := r.Secret(name)
	if strings.TrimSpace(v) == "" {
		return into
	}
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if !ok || k == "" || err != nil {
			r.FailSecret(name, v, "key=value pairs separated by commas, values URL-encoded, e.g. x-api-key=abc123")
			return into
		}
		if into == nil {
			into = map[string]string{}
		}
		into[k] = dec
	}
	return into
}

func resourceAttrs(r *envconfig.Reader) []attribute.KeyValue {
	v := r.Lookup("OTEL_RESOURCE_ATTRIBUTES")
	if v == "" {
		return nil
	}
	var out []attribute.KeyValue
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if !ok || k == "" || err != nil {
			r.Fail("OTEL_RESOURCE_ATTRIBUTES", v, "key=value pairs separated by commas, values URL-encoded, e.g. deployment.environment=prod,service.namespace=data")
			return nil
		}
		out = append(out, attribute.String(k, dec))
	}
	return out
}

// Start builds the OTLP exporter and tracer provider c describes and
// installs them; name and version are the server's (service.name unless
// OTEL_SERVICE_NAME says otherwise, service.version). It does nothing when
// c is off. Spans are batched; Shutdown flushes them.
func (t *Tracing) Start(ctx context.Context, c Config, name, version string) error {
	if !c.Enabled() {
		return nil
	}
	var client otlptrace.Client
	switch c.Protocol {
	case GRPC:
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(c.Endpoint)}
		if len(c.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(c.Headers))
		}
		client = otlptracegrpc.NewClient(opts...)
	default:
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(c.Endpoint)}
		if c.Protocol == HTTPJSON {
			opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
		}
		if len(c.Headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(c.Headers))
		}
		client = otlptracehttp.NewClient(opts...)
	}
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return fmt.Errorf("start the OTLP trace exporter for %s (%s): %w; check OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_PROTOCOL", c.Endpoint, c.Protocol, err)
	}
	// Resource: our attributes, then OTEL_RESOURCE_ATTRIBUTES, then
	// OTEL_SERVICE_NAME, each overriding the one before (the specification's
	// precedence).
	attrs := []attribute.KeyValue{attribute.String("service.name", name), attribute.String("service.version", version)}
	attrs = append(attrs, c.Resource...)
	if c.ServiceName != "" {
		attrs = append(attrs, attribute.String("service.name", c.ServiceName))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(newSpanBuffer(sdktrace.NewBatchSpanProcessor(exp), bufferedSpans, bufferDelay)),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithSampler(sampler(c.Sampler, c.SamplerArg)),
	)
	t.Use(tp, tp.Shutdown)
	return nil
}

// The span buffer in front of the batch processor (see spanBuffer): its
// batch size (the SDK's default export batch) and how long a span may wait
// there, small next to the batch processor's own 5 s schedule.
const (
	bufferedSpans = 512
	bufferDelay   = 25 * time.Millisecond
)

func sampler(name string, arg float64) sdktrace.Sampler {
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample()
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(arg)
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(arg))
	}
	return sdktrace.ParentBased(sdktrace.AlwaysSample())
}
