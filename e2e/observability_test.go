package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
)

// The operator files of issue 8 item 3, relative to this package.
const (
	obsDashboardPath  = "../scripts/grafana/ron.json"
	obsAlertsPath     = "../scripts/prometheus/alerts.yml"
	obsAlertTestsPath = "../scripts/prometheus/alerts_test.yml"
	obsPromtoolLimit  = time.Minute // one promtool run
	obsDSUID          = "${DS_PROMETHEUS}"
)

// obsSynthetic are series the dashboard and alerts may name although ron
// does not export them: Prometheus adds them to every scrape target.
var obsSynthetic = map[string]bool{"up": true}

// obsLazy are series ron registers on their first event rather than at
// start (a worker restart, a panic), so a healthy node's /metrics cannot
// show them. Each must still be registered by name in the Go file given;
// the test checks that instead of the scrape.
var obsLazy = map[string]string{
	"ron_tasks_panicked_total": "runtime/taskgroup.go",
}

// obsRef is one PromQL expression of the dashboard or the alert rules.
type obsRef struct {
	where string // "dashboard panel 12 \"Queue depth\" A", "alert RonDown"
	expr  string
}

// TestObservabilityMetricsExported starts ron with every role, sends each
// role a few requests so that its labelled series exist, scrapes the admin
// /metrics and fails naming every metric the Grafana dashboard or the
// alert rules query that ron does not export. Histogram quantiles must
// group by the bucket label the series really has: le for Prometheus
// histograms, vmrange for VictoriaMetrics ones.
func TestObservabilityMetricsExported(t *testing.T) {
	t.Parallel()
	refs := append(obsDashboardRefs(t, obsLoadDashboard(t)), obsAlertRefs(t, obsLoadAlerts(t))...)
	parsed := make([]obsPromQL, len(refs))
	wanted := map[string]bool{}
	for i, r := range refs {
		p, err := obsParsePromQL(r.expr)
		if err != nil {
			t.Fatalf("%s: %v\n%s", r.where, err, r.expr)
		}
		parsed[i] = p
		for _, name := range p.metrics {
			wanted[name] = true
		}
	}
	if len(wanted) < 50 {
		t.Fatalf("the dashboard and alerts name only %d metrics; the extractor is broken", len(wanted))
	}
	n, cn := obsStartNode(t), obsStartClusterNode(t)
	obsExercise(t, n)
	cn.post(cn.token("storage:write"), []byte("observability cluster "+t.Name()))
	var exp obsExposition
	pollUntilEvery(readyLimit, 50*time.Millisecond, func() bool {
		exp = obsScrape(t, n)
		exp.add(obsScrape(t, cn))
		return len(obsMissing(t, exp, wanted)) == 0
	})
	if missing := obsMissing(t, exp, wanted); len(missing) > 0 {
		t.Errorf("ron does not export %d metric(s) that the dashboard or alerts query:", len(missing))
		for _, name := range missing {
			t.Errorf("  %s (queried by %s)%s", name, obsUsers(refs, parsed, name), exp.hint(name))
		}
	}
	for i, p := range parsed {
		if err := exp.checkQuantiles(p); err != nil {
			t.Errorf("%s: %v\n%s", refs[i].where, err, refs[i].expr)
		}
	}
}

// obsStartNode starts `ron serve` with all five roles, a PMTiles pack named
// world, and an index peer nobody listens on (so peer lookups, their
// breaker and their errors have series).
func obsStartNode(t *testing.T) *node {
	t.Helper()
	dir := t.TempDir()
	packs := filepath.Join(dir, "packs")
	if err := os.Mkdir(packs, 0o755); err != nil {
		t.Fatal(err)
	}
	edgeCopyFile(t, edgeFixture(t, "pmtiles", "stamen_toner_z3.pmtiles"), filepath.Join(packs, "world.pmtiles"))
	cfg := writeConfig(t, dir, fmt.Sprintf("[edge]\npacks_dir = %q\n", packs))
	return startNode(t, nodeOpts{dataDir: dir, args: []string{"--config", cfg, "--index.peers", "http://" + freeAddr(t)}})
}

// obsStartClusterNode starts `ron serve` with all five roles as a one-node
// cluster (replication factor 1, so writes succeed alone): membership,
// replication, repair and index-ownership series exist only in cluster mode.
func obsStartClusterNode(t *testing.T) *node {
	t.Helper()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf("[cluster]\nenabled = true\nprofile = \"local\"\nlisten = %q\n"+
		"[storage]\nreplication_factor = 1\n", freeAddr(t)))
	return startNode(t, nodeOpts{dataDir: dir, args: []string{"--config", cfg}})
}

// obsExercise sends every role a few requests: reads, a write, a refused
// write, a name, resolves, a registry commit, edge fills, hits and tiles.
func obsExercise(t *testing.T, n *node) {
	t.Helper()
	body := []byte("observability " + t.Name())
	id := n.post(n.token("storage:write"), body).CID
	get := func(base, path string, h http.Header) int {
		return do(t, http.MethodGet, "http://"+base+path, h, nil).status
	}
	post := func(base, path string) int { return do(t, http.MethodPost, "http://"+base+path, nil, body).status }
	want := []struct {
		what      string
		got, want int
	}{
		{"storage GET", get(n.storage, "/o/"+id, nil), http.StatusOK},
		{"storage Range GET", get(n.storage, "/o/"+id, hdr("Range", "bytes=0-3")), http.StatusPartialContent},
		{"storage POST without token", post(n.storage, "/o"), http.StatusUnauthorized},
		{"gateway GET", get(n.gateway, "/o/"+id, nil), http.StatusOK},
		{"gateway POST without token", post(n.gateway, "/o"), http.StatusUnauthorized},
		{"gateway registry head", get(n.gateway, "/registry/head", nil), http.StatusOK},
		{"edge GET (fill)", get(n.edge, "/o/"+id, nil), http.StatusOK},
		{"edge tile", get(n.edge, "/tiles/world/0/0/0.png", nil), http.StatusOK},
		{"edge pack Range", get(n.edge, "/packs/world.pmtiles", hdr("Range", "bytes=0-126")), http.StatusPartialContent},
		{"registry head", get(n.registry, "/registry/head", nil), http.StatusOK},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("%s: status %d, want %d", w.what, w.got, w.want)
		}
	}
	n.mustName("set", "obs.example", id)
	n.mustResolve("obs.example")
	n.mustResolve("obs.example")
	n.resolveHTTP(absentID(t, 0)) // a local miss asks the dead peer
	(&edgeNode{node: n}).waitHit("/o/"+id, body)
	cl := &regCLI{t: t, env: n.cliEnv()}
	var genesis struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(cl.artifact("0").Payload, &genesis); err != nil {
		t.Fatalf("genesis payload: %v", err)
	}
	cl.cycle(writeSet(t, genesis.Items, "e2e-observability"))
}

// obsScrape fetches the admin plane's /metrics (loopback: no token).
func obsScrape(t *testing.T, n *node) obsExposition {
	t.Helper()
	r := do(t, http.MethodGet, "http://"+n.admin+"/metrics", nil, nil)
	if r.status != http.StatusOK || r.err != nil {
		t.Fatalf("GET /metrics: %d %v", r.status, r.err)
	}
	exp, err := obsParseExposition(string(r.body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	return exp
}

// obsMissing lists the wanted names exp lacks, sorted. Synthetic names
// pass; a lazy name passes when its Go file registers it.
func obsMissing(t *testing.T, exp obsExposition, wanted map[string]bool) []string {
	t.Helper()
	var out []string
	for name := range wanted {
		if exp[name] != nil || obsSynthetic[name] {
			continue
		}
		if file, ok := obsLazy[name]; ok {
			obsCheckLazy(t, name, file)
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// obsCheckLazy fails unless file registers name (without its ron_ prefix,
// as runtime.Metrics takes it) as a string literal.
func obsCheckLazy(t *testing.T, name, file string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatalf("lazy metric %s: %v", name, err)
	}
	if !bytes.Contains(src, []byte(`"`+strings.TrimPrefix(name, "ron_")+`"`)) {
		t.Errorf("lazy metric %s is not registered in %s any more", name, file)
	}
}

// obsUsers names the expressions that query name.
func obsUsers(refs []obsRef, parsed []obsPromQL, name string) string {
	var out []string
	for i, p := range parsed {
		if slices.Contains(p.metrics, name) {
			out = append(out, refs[i].where)
		}
	}
	return strings.Join(out, "; ")
}

// ---- The Prometheus text format.

// obsExposition maps every series name of one scrape to the label names
// seen on it.
type obsExposition map[string]map[string]bool

// add merges other's series into e.
func (e obsExposition) add(other obsExposition) {
	for name, labels := range other {
		if e[name] == nil {
			e[name] = map[string]bool{}
		}
		for l := range labels {
			e[name][l] = true
		}
	}
}

var obsNameRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// obsParseExposition reads Prometheus text: comments and blank lines are
// skipped, every other line must be `name[{labels}] value [timestamp]`.
func obsParseExposition(text string) (obsExposition, error) {
	exp := obsExposition{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, rest, err := obsSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w", i+1, line, err)
		}
		if f := strings.Fields(rest); len(f) < 1 || len(f) > 2 {
			return nil, fmt.Errorf("line %d %q: want a value and an optional timestamp", i+1, line)
		} else if _, err := strconv.ParseFloat(f[0], 64); err != nil {
			return nil, fmt.Errorf("line %d %q: value: %w", i+1, line, err)
		}
		if exp[name] == nil {
			exp[name] = map[string]bool{}
		}
		for _, l := range labels {
			exp[name][l] = true
		}
	}
	return exp, nil
}

// obsSample splits one sample line into name, label names and the rest.
func obsSample(line string) (name string, labels []string, rest string, err error) {
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return "", nil, "", fmt.Errorf("no value")
	}
	name, rest = line[:end], line[end:]
	if !obsNameRE.MatchString(name) {
		return "", nil, "", fmt.Errorf("bad metric name %q", name)
	}
	if rest[0] != '{' {
		return name, nil, rest, nil
	}
	s := &obsScanner{s: rest}
	m, err := s.matchers()
	if err != nil {
		return "", nil, "", err
	}
	return name, m.labels, rest[s.i:], nil
}

// bucketLabel is "le" or "vmrange" for a histogram's _bucket series, ""
// for anything else.
func (e obsExposition) bucketLabel(name string) string {
	if !strings.HasSuffix(name, "_bucket") {
		return ""
	}
	switch {
	case e[name]["le"]:
		return "le"
	case e[name]["vmrange"]:
		return "vmrange"
	}
	return ""
}

// family strips the sample suffixes an exported name really has:
// _bucket, _sum and _count of a histogram (its _bucket series exists) or a
// summary (its base has quantile series), and _total of a counter.
func (e obsExposition) family(name string) string {
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suf)
		if ok && (e.bucketLabel(base+"_bucket") != "" || e[base]["quantile"]) {
			return base
		}
	}
	if base, ok := strings.CutSuffix(name, "_total"); ok {
		return base
	}
	return name
}

// hint names the exported series of the family a missing name seems to
// belong to (its suffix stripped), e.g. a _total the metric does not have.
func (e obsExposition) hint(missing string) string {
	base := missing
	for _, suf := range []string{"_bucket", "_sum", "_count", "_total"} {
		if b, ok := strings.CutSuffix(missing, suf); ok {
			base = b
			break
		}
	}
	var near []string
	for name := range e {
		if e.family(name) == base || name == base {
			near = append(near, name)
		}
	}
	if len(near) == 0 {
		return ""
	}
	slices.Sort(near)
	return "; ron exports " + strings.Join(near, ", ")
}

// checkQuantiles requires every histogram_quantile over a _bucket series to
// group by that histogram's bucket label and not by the other one.
func (e obsExposition) checkQuantiles(p obsPromQL) error {
	if !slices.Contains(p.funcs, "histogram_quantile") {
		return nil
	}
	other := map[string]string{"le": "vmrange", "vmrange": "le"}
	for _, name := range p.metrics {
		label := e.bucketLabel(name)
		if label == "" {
			continue
		}
		if !slices.Contains(p.grouping, label) || slices.Contains(p.grouping, other[label]) {
			return fmt.Errorf("%s has %s buckets: histogram_quantile must aggregate by (%s), not by %v", name, label, label, p.grouping)
		}
	}
	return nil
}

// ---- PromQL names.

// obsPromQL is what one PromQL expression names.
type obsPromQL struct {
	metrics   []string      // metric names, once each, in order
	selectors []obsSelector // every metric occurrence with its matchers
	grouping  []string      // labels of by/without/on/ignoring/group_* lists
	funcs     []string      // functions called
}

// obsSelector is one metric occurrence: `name{matchers}`.
type obsSelector struct {
	name     string
	matchers string // the text between the braces; "" without braces
}

// obsKeywords are identifiers that are neither metrics nor called like
// functions: aggregation operators (followed by by/without or a paren),
// binary and set operators, modifiers and number literals.
var obsKeywords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true,
	"limit_ratio": true, "and": true, "or": true, "unless": true, "atan2": true, "bool": true,
	"offset": true, "inf": true, "nan": true,
}

// obsGroupingKeywords take a label list in parentheses.
var obsGroupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// obsParsePromQL extracts metric names from expr: identifiers followed by a
// selector's { or standing bare, minus functions (an identifier followed
// by a paren), keywords, label names (inside braces and grouping lists)
// and Grafana variables ($job, ${job}, [$__rate_interval]). A
// {__name__="x"} matcher names x. Unbalanced brackets or unterminated
// strings are errors.
func obsParsePromQL(expr string) (obsPromQL, error) {
	s := &obsScanner{s: expr}
	depth := 0
	for s.i < len(s.s) {
		c := s.s[s.i]
		var err error
		switch {
		case c == '#':
			s.skipLine()
		case c == '"' || c == '\'' || c == '`':
			_, err = s.str()
		case c == '$':
			s.variable()
		case c == '[':
			err = s.skipPast(']')
		case c == '{':
			err = s.selector("")
		case c == '(':
			depth++
			s.i++
		case c == ')':
			if depth--; depth < 0 {
				return obsPromQL{}, fmt.Errorf("unbalanced ) at offset %d", s.i)
			}
			s.i++
		case obsDigit(c) || (c == '.' && s.i+1 < len(s.s) && obsDigit(s.s[s.i+1])):
			s.number()
		case obsIdentStart(c):
			err = s.ident()
		default:
			s.i++
		}
		if err != nil {
			return obsPromQL{}, err
		}
	}
	if depth != 0 {
		return obsPromQL{}, fmt.Errorf("%d unclosed (", depth)
	}
	return s.out, nil
}

// obsScanner walks one PromQL expression.
type obsScanner struct {
	s   string
	i   int
	out obsPromQL
}

func obsDigit(c byte) bool      { return c >= '0' && c <= '9' }
func obsIdentStart(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func obsIdentChar(c byte) bool  { return obsIdentStart(c) || obsDigit(c) }

// next returns the offset of the next non-space byte at or after i.
func (s *obsScanner) next(i int) int {
	for i < len(s.s) && strings.IndexByte(" \t\r\n", s.s[i]) >= 0 {
		i++
	}
	return i
}

func (s *obsScanner) at(i int, c byte) bool { return i < len(s.s) && s.s[i] == c }

func (s *obsScanner) skipLine() {
	for s.i < len(s.s) && s.s[s.i] != '\n' {
		s.i++
	}
}

// str consumes a quoted string and returns its raw content.
func (s *obsScanner) str() (string, error) {
	q, start := s.s[s.i], s.i
	for s.i++; s.i < len(s.s); s.i++ {
		switch {
		case s.s[s.i] == '\\' && q != '`':
			s.i++
		case s.s[s.i] == q:
			s.i++
			return s.s[start+1 : s.i-1], nil
		}
	}
	return "", fmt.Errorf("unterminated string at offset %d", start)
}

// variable consumes a Grafana variable: $name or ${name}.
func (s *obsScanner) variable() {
	s.i++
	if s.at(s.i, '{') {
		for s.i < len(s.s) && s.s[s.i] != '}' {
			s.i++
		}
		s.i++
		return
	}
	for s.i < len(s.s) && obsIdentChar(s.s[s.i]) {
		s.i++
	}
}

// skipPast consumes everything up to and including end (range and
// subquery brackets hold durations and variables only).
func (s *obsScanner) skipPast(end byte) error {
	j := strings.IndexByte(s.s[s.i:], end)
	if j < 0 {
		return fmt.Errorf("unterminated %c at offset %d", s.s[s.i], s.i)
	}
	s.i += j + 1
	return nil
}

// number consumes a number or duration literal (0.99, 1e-3, 0x1F, 5m, 1h30m).
func (s *obsScanner) number() {
	start := s.i
	for s.i < len(s.s) {
		c := s.s[s.i]
		exp := (c == '+' || c == '-') && s.i > start && s.s[s.i-1]|0x20 == 'e' && !strings.HasPrefix(s.s[start:], "0x")
		if !obsIdentChar(c) && c != '.' && !exp {
			return
		}
		s.i++
	}
}

// ident classifies one identifier by what follows it.
func (s *obsScanner) ident() error {
	start := s.i
	for s.i < len(s.s) && obsIdentChar(s.s[s.i]) {
		s.i++
	}
	word, lower, nx := s.s[start:s.i], strings.ToLower(s.s[start:s.i]), s.next(s.i)
	switch {
	case obsGroupingKeywords[lower]:
		if s.at(nx, '(') {
			s.i = nx
			return s.labelList()
		}
	case s.at(nx, '('):
		s.out.funcs = append(s.out.funcs, word)
	case obsKeywords[lower]:
	case s.at(nx, '{'):
		s.i = nx
		return s.selector(word)
	default:
		s.addMetric(word, "")
	}
	return nil
}

// labelList consumes "(l1, l2, …)" after a grouping keyword.
func (s *obsScanner) labelList() error {
	start := s.i
	if err := s.skipPast(')'); err != nil {
		return err
	}
	for _, l := range strings.Split(s.s[start+1:s.i-1], ",") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if !obsNameRE.MatchString(l) || strings.Contains(l, ":") {
			return fmt.Errorf("bad label %q in grouping list at offset %d", l, start)
		}
		s.out.grouping = append(s.out.grouping, l)
	}
	return nil
}

// selector consumes {matchers} after name ("" for a bare {…} selector).
func (s *obsScanner) selector(name string) error {
	start := s.i
	m, err := s.matchers()
	if err != nil {
		return err
	}
	if m.name != "" {
		name = m.name
	}
	if name == "" {
		return fmt.Errorf("selector without a metric name at offset %d", start)
	}
	s.addMetric(name, s.s[start+1:s.i-1])
	return nil
}

// obsMatchers is what one {…} holds.
type obsMatchers struct {
	labels []string
	name   string // from __name__="…"
}

// matchers consumes {…}: label names, operators and quoted values.
func (s *obsScanner) matchers() (obsMatchers, error) {
	var m obsMatchers
	start := s.i
	for s.i++; s.i < len(s.s); {
		c := s.s[s.i]
		switch {
		case c == '}':
			s.i++
			return m, nil
		case c == '"' || c == '\'' || c == '`':
			if _, err := s.str(); err != nil {
				return m, err
			}
		case obsIdentStart(c):
			if err := s.matcher(&m); err != nil {
				return m, err
			}
		case strings.IndexByte(" \t\r\n,", c) >= 0:
			s.i++
		default:
			return m, fmt.Errorf("unexpected %q in selector at offset %d", c, s.i)
		}
	}
	return m, fmt.Errorf("unterminated { at offset %d", start)
}

// matcher consumes one `label op "value"`.
func (s *obsScanner) matcher(m *obsMatchers) error {
	start := s.i
	for s.i < len(s.s) && obsIdentChar(s.s[s.i]) {
		s.i++
	}
	label := s.s[start:s.i]
	s.i = s.next(s.i)
	opStart := s.i
	for s.i < len(s.s) && strings.IndexByte("=!~", s.s[s.i]) >= 0 {
		s.i++
	}
	op := s.s[opStart:s.i]
	if !slices.Contains([]string{"=", "!=", "=~", "!~"}, op) {
		return fmt.Errorf("bad matcher operator %q after %s at offset %d", op, label, opStart)
	}
	s.i = s.next(s.i)
	if s.i >= len(s.s) || strings.IndexByte("\"'`", s.s[s.i]) < 0 {
		return fmt.Errorf("matcher %s%s without a quoted value at offset %d", label, op, s.i)
	}
	v, err := s.str()
	if err != nil {
		return err
	}
	m.labels = append(m.labels, label)
	if label == "__name__" && op == "=" {
		m.name = v
	}
	return nil
}

func (s *obsScanner) addMetric(name, matchers string) {
	s.out.selectors = append(s.out.selectors, obsSelector{name: name, matchers: matchers})
	if !slices.Contains(s.out.metrics, name) {
		s.out.metrics = append(s.out.metrics, name)
	}
}

// ---- The Grafana dashboard.

// obsDashboard is the part of scripts/grafana/ron.json the tests read.
type obsDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	SchemaVersion int           `json:"schemaVersion"`
	UID           string        `json:"uid"`
	Title         string        `json:"title"`
	Panels        []obsPanel    `json:"panels"`
	Templating    obsTemplating `json:"templating"`
}

type obsTemplating struct {
	List []obsVariable `json:"list"`
}

// obsVariable is one template variable; Query is a string or an object
// with a "query" field (Grafana ≥ 10).
type obsVariable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Datasource *obsDatasource  `json:"datasource"`
	Query      json.RawMessage `json:"query"`
}

type obsPanel struct {
	ID         *int           `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Datasource *obsDatasource `json:"datasource"`
	GridPos    *obsGridPos    `json:"gridPos"`
	Targets    []obsTarget    `json:"targets"`
	Panels     []obsPanel     `json:"panels"` // a collapsed row's panels
}

type obsDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type obsGridPos struct {
	H, W, X, Y *int
}

type obsTarget struct {
	Expr       string         `json:"expr"`
	RefID      string         `json:"refId"`
	Datasource *obsDatasource `json:"datasource"`
}

func obsLoadDashboard(t *testing.T) obsDashboard {
	t.Helper()
	raw, err := os.ReadFile(obsDashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d obsDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", obsDashboardPath, err)
	}
	return d
}

// all returns every panel, rows and the panels of collapsed rows included.
func (d obsDashboard) all() []obsPanel {
	var out []obsPanel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

// obsDashboardRefs lists every target expression and every template
// variable's selector.
func obsDashboardRefs(t *testing.T, d obsDashboard) []obsRef {
	t.Helper()
	var refs []obsRef
	for _, p := range d.all() {
		for _, tg := range p.Targets {
			refs = append(refs, obsRef{where: fmt.Sprintf("dashboard panel %d %q %s", obsID(p), p.Title, tg.RefID), expr: tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		q, err := v.selector()
		if err != nil {
			t.Fatalf("dashboard variable %s: %v", v.Name, err)
		}
		if q != "" {
			refs = append(refs, obsRef{where: "dashboard variable " + v.Name, expr: q})
		}
	}
	return refs
}

func obsID(p obsPanel) int {
	if p.ID == nil {
		return 0
	}
	return *p.ID
}

var obsLabelValuesRE = regexp.MustCompile(`^label_values\(\s*(?:(.*\S)\s*,\s*)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)

// selector returns the PromQL inside a variable's query: the series of
// label_values(series, label), the expression of query_result(expr), ""
// for label_values(label) and non-query variables.
func (v obsVariable) selector() (string, error) {
	if v.Type != "query" {
		return "", nil
	}
	var q string
	if err := json.Unmarshal(v.Query, &q); err != nil {
		var obj struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &obj); err != nil {
			return "", fmt.Errorf("query %s: %w", v.Query, err)
		}
		q = obj.Query
	}
	q = strings.TrimSpace(q)
	if m := obsLabelValuesRE.FindStringSubmatch(q); m != nil {
		return m[1], nil
	}
	if inner, ok := strings.CutPrefix(q, "query_result("); ok && strings.HasSuffix(inner, ")") {
		return strings.TrimSuffix(inner, ")"), nil
	}
	return "", fmt.Errorf("unsupported variable query %q", q)
}

// TestObservabilityDashboardStructure validates scripts/grafana/ron.json:
// the DS_PROMETHEUS input, schema version, job and instance variables on
// that datasource, unique panel ids, grid positions inside 24 columns
// without overlaps, a datasource and expression targets on every panel
// but rows, and every selector filtered by $job and $instance.
func TestObservabilityDashboardStructure(t *testing.T) {
	t.Parallel()
	d := obsLoadDashboard(t)
	for _, err := range obsCheckDashboard(d) {
		t.Error(err)
	}
}

// obsCheckDashboard returns every structural fault of d.
func obsCheckDashboard(d obsDashboard) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		fail("__inputs = %+v, want one prometheus datasource input DS_PROMETHEUS", d.Inputs)
	}
	if d.SchemaVersion < 36 || d.SchemaVersion > 41 {
		fail("schemaVersion %d, want 36…41", d.SchemaVersion)
	}
	if d.UID == "" || d.Title == "" {
		fail("uid %q, title %q: both needed", d.UID, d.Title)
	}
	errs = append(errs, obsCheckVariables(d.Templating.List)...)
	errs = append(errs, obsCheckLayout(d.all())...)
	for _, p := range d.all() {
		errs = append(errs, obsCheckPanel(p)...)
	}
	return errs
}

// obsCheckVariables wants job and instance query variables on DS_PROMETHEUS.
func obsCheckVariables(vars []obsVariable) []error {
	var errs []error
	for _, want := range []string{"job", "instance"} {
		i := slices.IndexFunc(vars, func(v obsVariable) bool { return v.Name == want })
		switch {
		case i < 0:
			errs = append(errs, fmt.Errorf("no template variable %q", want))
		case vars[i].Type != "query" || !obsOurDS(vars[i].Datasource):
			errs = append(errs, fmt.Errorf("variable %q: type %q, datasource %+v; want a query on %s", want, vars[i].Type, vars[i].Datasource, obsDSUID))
		}
	}
	return errs
}

func obsOurDS(ds *obsDatasource) bool {
	return ds != nil && ds.Type == "prometheus" && ds.UID == obsDSUID
}

// obsCheckLayout wants unique positive ids and grid positions inside 24
// columns that do not overlap.
func obsCheckLayout(panels []obsPanel) []error {
	var errs []error
	ids := map[int]string{}
	var placed []obsPanel
	for _, p := range panels {
		id := obsID(p)
		if id <= 0 {
			errs = append(errs, fmt.Errorf("panel %q: id %v, want a positive id", p.Title, p.ID))
		} else if prev, dup := ids[id]; dup {
			errs = append(errs, fmt.Errorf("panels %q and %q share id %d", prev, p.Title, id))
		}
		ids[id] = p.Title
		g := p.GridPos
		if g == nil || g.H == nil || g.W == nil || g.X == nil || g.Y == nil {
			errs = append(errs, fmt.Errorf("panel %d %q: gridPos needs h, w, x and y", id, p.Title))
			continue
		}
		if *g.W < 1 || *g.H < 1 || *g.X < 0 || *g.Y < 0 || *g.X+*g.W > 24 {
			errs = append(errs, fmt.Errorf("panel %d %q: gridPos h=%d w=%d x=%d y=%d outside the 24-column grid", id, p.Title, *g.H, *g.W, *g.X, *g.Y))
			continue
		}
		for _, q := range placed {
			if obsOverlap(*g, *q.GridPos) {
				errs = append(errs, fmt.Errorf("panels %d %q and %d %q overlap", id, p.Title, obsID(q), q.Title))
			}
		}
		placed = append(placed, p)
	}
	return errs
}

func obsOverlap(a, b obsGridPos) bool {
	return *a.X < *b.X+*b.W && *b.X < *a.X+*a.W && *a.Y < *b.Y+*b.H && *b.Y < *a.Y+*a.H
}

// obsCheckPanel wants rows without queries and every other panel on
// DS_PROMETHEUS with targets whose expressions parse and filter every
// selector by $job and $instance.
func obsCheckPanel(p obsPanel) []error {
	var errs []error
	name := fmt.Sprintf("panel %d %q", obsID(p), p.Title)
	if p.Type == "row" {
		if len(p.Targets) > 0 {
			errs = append(errs, fmt.Errorf("%s: a row with targets", name))
		}
		return errs
	}
	if p.Type == "" || p.Title == "" {
		errs = append(errs, fmt.Errorf("%s: type %q; type and title needed", name, p.Type))
	}
	if !obsOurDS(p.Datasource) {
		errs = append(errs, fmt.Errorf("%s: datasource %+v, want prometheus %s", name, p.Datasource, obsDSUID))
	}
	if len(p.Targets) == 0 {
		errs = append(errs, fmt.Errorf("%s: no targets", name))
	}
	refIDs := map[string]bool{}
	for _, tg := range p.Targets {
		if tg.RefID == "" || refIDs[tg.RefID] {
			errs = append(errs, fmt.Errorf("%s: refId %q empty or repeated", name, tg.RefID))
		}
		refIDs[tg.RefID] = true
		if tg.Datasource != nil && !obsOurDS(tg.Datasource) {
			errs = append(errs, fmt.Errorf("%s %s: target datasource %+v", name, tg.RefID, tg.Datasource))
		}
		errs = append(errs, obsCheckExpr(name+" "+tg.RefID, tg.Expr)...)
	}
	return errs
}

// obsCheckExpr wants a non-empty expression that parses, names a metric
// and filters every selector by the job and instance variables.
func obsCheckExpr(where, expr string) []error {
	if strings.TrimSpace(expr) == "" {
		return []error{fmt.Errorf("%s: empty expr", where)}
	}
	p, err := obsParsePromQL(expr)
	if err != nil {
		return []error{fmt.Errorf("%s: %v", where, err)}
	}
	if len(p.selectors) == 0 {
		return []error{fmt.Errorf("%s: queries no metric: %s", where, expr)}
	}
	var errs []error
	for _, sel := range p.selectors {
		if !strings.Contains(sel.matchers, `job=~"$job"`) || !strings.Contains(sel.matchers, `instance=~"$instance"`) {
			errs = append(errs, fmt.Errorf("%s: %s{%s} is not filtered by job=~\"$job\" and instance=~\"$instance\"", where, sel.name, sel.matchers))
		}
	}
	return errs
}

// ---- The alert rules.

// obsAlert is one alerting rule of scripts/prometheus/alerts.yml.
type obsAlert struct {
	name, expr, forDur, severity, summary, description string
}

func obsLoadAlerts(t *testing.T) []obsAlert {
	t.Helper()
	raw, err := os.ReadFile(obsAlertsPath)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := obsParseAlerts(string(raw))
	if err != nil {
		t.Fatalf("%s: %v", obsAlertsPath, err)
	}
	return rules
}

func obsAlertRefs(t *testing.T, rules []obsAlert) []obsRef {
	t.Helper()
	refs := make([]obsRef, 0, len(rules))
	for _, r := range rules {
		refs = append(refs, obsRef{where: "alert " + r.name, expr: r.expr})
	}
	return refs
}

// obsParseAlerts reads the YAML subset alerts.yml is written in: rules
// start with "- alert: Name"; their keys expr (inline or a | / > block),
// for, severity, summary and description are read, other keys skipped.
// Recording rules and lines that are not "key: value" inside a rule are
// errors; promtool validates the full YAML.
func obsParseAlerts(text string) ([]obsAlert, error) {
	lines := strings.Split(text, "\n")
	var rules []obsAlert
	inRule, ruleIndent := false, 0
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		if name, ok := strings.CutPrefix(trimmed, "- alert:"); ok {
			rules = append(rules, obsAlert{name: obsUnquote(name)})
			inRule, ruleIndent = true, indent
			continue
		}
		if strings.HasPrefix(trimmed, "- record:") {
			return nil, fmt.Errorf("line %d: recording rules are not expected here", i+1)
		}
		if inRule = inRule && indent > ruleIndent; !inRule {
			continue
		}
		key, val, ok := strings.Cut(trimmed, ":")
		if !ok {
			return nil, fmt.Errorf("line %d %q: want key: value", i+1, trimmed)
		}
		val = strings.TrimSpace(val)
		if slices.Contains([]string{"|", "|-", ">", ">-"}, val) {
			val, i = obsBlock(lines, i, indent, val[0] == '>')
		} else {
			val = obsUnquote(val)
		}
		obsSetAlertKey(&rules[len(rules)-1], strings.TrimPrefix(key, "- "), val)
	}
	return rules, nil
}

// obsBlock reads the block scalar after line i (deeper than indent) and
// returns it with the index of its last line; folded blocks join lines
// with spaces, literal ones with newlines.
func obsBlock(lines []string, i, indent int, folded bool) (string, int) {
	var block []string
	for i+1 < len(lines) {
		next := lines[i+1]
		if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " ")) <= indent {
			break
		}
		i++
		block = append(block, strings.TrimSpace(next))
	}
	sep := "\n"
	if folded {
		sep = " "
	}
	return strings.TrimSpace(strings.Join(block, sep)), i
}

func obsSetAlertKey(r *obsAlert, key, val string) {
	switch key {
	case "expr":
		r.expr = val
	case "for":
		r.forDur = val
	case "severity":
		r.severity = val
	case "summary":
		r.summary = val
	case "description":
		r.description = val
	}
}

// obsUnquote strips YAML quotes from a scalar: in single quotes a doubled
// quote stands for one; double quotes take Go's escapes, which YAML shares
// for the ones used here. An unquoted scalar loses a trailing # comment.
func obsUnquote(v string) string {
	v = strings.TrimSpace(v)
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if j := strings.Index(v, " #"); j >= 0 {
		v = strings.TrimSpace(v[:j])
	}
	return v
}

var obsAlertNameRE = regexp.MustCompile(`^Ron[A-Z][A-Za-z]+$`)

// obsCheckAlerts wants unique RonCamelCase names, an expression that
// parses and names a metric, a warning or critical severity, a summary
// and a description, and a for: that is a duration when present.
func obsCheckAlerts(rules []obsAlert) []error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range rules {
		fail := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("alert "+r.name+": "+format, args...))
		}
		if !obsAlertNameRE.MatchString(r.name) || seen[r.name] {
			fail("name must be unique and RonCamelCase")
		}
		seen[r.name] = true
		if p, err := obsParsePromQL(r.expr); err != nil || len(p.metrics) == 0 {
			fail("expr %q: %v (and it must name a metric)", r.expr, err)
		}
		if r.severity != "warning" && r.severity != "critical" {
			fail("severity %q, want warning or critical", r.severity)
		}
		if r.summary == "" || r.description == "" {
			fail("summary and description annotations needed")
		}
		if _, err := time.ParseDuration(r.forDur); r.forDur != "" && err != nil {
			fail("for %q: %v", r.forDur, err)
		}
	}
	return errs
}

// TestObservabilityAlertRules checks the rules' shape and that the issue's
// alerts are all there.
func TestObservabilityAlertRules(t *testing.T) {
	t.Parallel()
	rules := obsLoadAlerts(t)
	for _, err := range obsCheckAlerts(rules) {
		t.Error(err)
	}
	have := map[string]bool{}
	for _, r := range rules {
		have[r.name] = true
	}
	// Issue 8 item 3: not ready, degraded, rejection rate, breaker open,
	// checkpoint lag, disk low (under-replicated comes with the cluster).
	for _, want := range []string{"RonDown", "RonNotReady", "RonDegraded", "RonRegistryWriteUnready", "RonCrashLooping", "RonGatewayDegraded",
		"RonHighRejectionRatio", "RonBreakerOpen", "RonRegistryCheckpointLag", "RonStorageDiskLow"} {
		if !have[want] {
			t.Errorf("alerts.yml has no %s", want)
		}
	}
}

// ---- promtool.

// TestObservabilityPromtool runs Debian's promtool (package prometheus):
// `check rules` on alerts.yml (its rule count must equal ours, so the
// subset reader above misses nothing), `test rules` on alerts_test.yml,
// and `check rules` on a recording rule per dashboard expression, which
// makes the real PromQL parser read every panel query.
func TestObservabilityPromtool(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		tooltest.Missing(t, "promtool is not installed (Debian package prometheus; scripts/test.sh installs it)")
	}
	out := obsPromtool(t, bin, "check", "rules", obsAlertsPath)
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(obsLoadAlerts(t))); !strings.Contains(out, want) {
		t.Errorf("promtool check rules: %q, want %q", out, want)
	}
	obsPromtool(t, bin, "test", "rules", obsAlertTestsPath)
	refs := obsDashboardRefs(t, obsLoadDashboard(t))
	out = obsPromtool(t, bin, "check", "rules", obsRecordingRules(t, refs))
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(refs)); !strings.Contains(out, want) {
		t.Errorf("promtool check rules on the dashboard's queries: %q, want %q", out, want)
	}
}

// obsPromtool runs promtool args and returns its output; a non-zero exit
// fails the test.
func obsPromtool(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), obsPromtoolLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// obsGrafanaIntervals are Grafana's interval variables, which stand where
// PromQL wants a duration; other variables sit inside label values.
var obsGrafanaIntervals = strings.NewReplacer("${__rate_interval}", "5m", "$__rate_interval", "5m",
	"${__interval}", "1m", "$__interval", "1m", "${__range}", "1h", "$__range", "1h")

// obsRecordingRules writes one recording rule per expression (JSON
// strings are YAML double-quoted scalars) and returns the file's path.
func obsRecordingRules(t *testing.T, refs []obsRef) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, r := range refs {
		var q bytes.Buffer
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(obsGrafanaIntervals.Replace(r.expr)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "      - record: dashboard:query_%d\n        expr: %s", i, q.String())
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ---- The readers' own tests.

// TestObservabilityPromQLNames: what the extractor takes for a metric
// name, a grouping label or a function.
func TestObservabilityPromQLNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr              string
		metrics, grouping []string
	}{
		{`up == 0`, []string{"up"}, nil},
		{`sum by (role, le) (rate(a_bucket{job=~"$job",le!="+Inf"}[$__rate_interval]))`, []string{"a_bucket"}, []string{"role", "le"}},
		{`sum(rate(a_total[5m])) without (instance) / on(job) group_left(role) b`, []string{"a_total", "b"}, []string{"instance", "job", "role"}},
		{`histogram_quantile(0.99, sum by (vmrange) (rate(x_bucket{a="}"}[1m:30s])))`, []string{"x_bucket"}, []string{"vmrange"}},
		{`(h + 1 - c) > 0 and age > 60 or vector(0) unless bool_metric offset 5m`, []string{"h", "c", "age", "bool_metric"}, nil},
		{`{__name__="by_name", role="x"} * 1e-3 + 0x1F - 2.5e+3`, []string{"by_name"}, nil},
		{`topk(10, count_values("v", m)) BY (v) # a comment naming not_a_metric`, []string{"m"}, []string{"v"}},
		{`label_replace(m{job=~"${job}"}, "dst", "$1", "src", "(.*)")`, []string{"m"}, nil},
		{`predict_linear(free[6h], 24 * 3600) < 1024 * 1024 and free >= inf`, []string{"free"}, nil},
		{`max by (a) (x) * 2 + max by (a)(x) @ start()`, []string{"x"}, []string{"a", "a"}},
		{`rate(ns:recorded:rate5m[5m])`, []string{"ns:recorded:rate5m"}, nil},
	} {
		p, err := obsParsePromQL(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if !slices.Equal(p.metrics, tc.metrics) || !slices.Equal(p.grouping, tc.grouping) {
			t.Errorf("%s:\n got metrics %q grouping %q\nwant metrics %q grouping %q", tc.expr, p.metrics, p.grouping, tc.metrics, tc.grouping)
		}
	}
}

// TestObservabilityPromQLBadInput: malformed expressions are errors, never
// a silently shorter name list.
func TestObservabilityPromQLBadInput(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		`rate(x[5m]`,
		`rate(x[5m]))`,
		`x{job="a}`,
		`x{job="a"`,
		`x{job=a}`,
		`x{job<"a"}`,
		`rate(x[5m)`,
		`sum by (role x) (y)`,
		`sum by (role`,
		`{job="a"}`,
		`x{-}`,
		"y{a=`b}",
	} {
		if p, err := obsParsePromQL(expr); err == nil {
			t.Errorf("%s: no error (metrics %q)", expr, p.metrics)
		}
	}
}

// TestObservabilityExposition: the scrape reader and the suffix rules.
func TestObservabilityExposition(t *testing.T) {
	t.Parallel()
	exp, err := obsParseExposition(`# HELP x
ron_a_total{role="storage",route="/o/{b3}"} 3
ron_h_bucket{role="edge",vmrange="1.000e-02...1.136e-02"} 1
ron_h_sum{role="edge"} 0.01
ron_h_count{role="edge"} 1
ron_p_bucket{le="0.5"} 1
ron_p_bucket{le="+Inf"} 2
ron_p_sum 0.7
ron_p_count 2
go_gc_duration_seconds{quantile="0.5"} 0.001
go_gc_duration_seconds_count 4
ron_objects_count 7
ron_esc{v="a\"}b"} 1 1700000000
`)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"ron_h_bucket": "vmrange", "ron_p_bucket": "le", "ron_a_total": "", "ron_h_sum": ""} {
		if got := exp.bucketLabel(name); got != want {
			t.Errorf("bucketLabel(%s) = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]string{"ron_a_total": "ron_a", "ron_h_sum": "ron_h", "ron_p_count": "ron_p",
		"go_gc_duration_seconds_count": "go_gc_duration_seconds", "ron_objects_count": "ron_objects_count", "ron_esc": "ron_esc"} {
		if got := exp.family(name); got != want {
			t.Errorf("family(%s) = %q, want %q", name, got, want)
		}
	}
	if h := exp.hint("ron_h_total"); !strings.Contains(h, "ron_h_bucket") {
		t.Errorf("hint for ron_h_total = %q, want the ron_h series", h)
	}
	le, _ := obsParsePromQL(`histogram_quantile(0.9, sum by (le) (rate(ron_h_bucket[5m])))`)
	vm, _ := obsParsePromQL(`histogram_quantile(0.9, sum by (vmrange) (rate(ron_h_bucket[5m])))`)
	if exp.checkQuantiles(le) == nil || exp.checkQuantiles(vm) != nil {
		t.Errorf("checkQuantiles: by (le) over vmrange buckets must fail, by (vmrange) must pass")
	}
	for _, bad := range []string{"ron_a 1 2 3", "ron_a", "ron_a{x=\"1\" 1", "1ron 2", "ron_a notanumber", "ron_a{x=1} 1"} {
		if _, err := obsParseExposition(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestObservabilityReadersBadInput: broken dashboards and rule files are
// reported, not read around.
func TestObservabilityReadersBadInput(t *testing.T) {
	t.Parallel()
	one, two := 1, 2
	zero, six, twelve, twentyfour := 0, 6, 12, 24
	grid := func(x, w *int) *obsGridPos { return &obsGridPos{H: &six, W: w, X: x, Y: &zero} }
	ds := &obsDatasource{Type: "prometheus", UID: obsDSUID}
	panel := func(id, x *int) obsPanel {
		return obsPanel{ID: id, Type: "timeseries", Title: "p", Datasource: ds, GridPos: grid(x, &twelve),
			Targets: []obsTarget{{RefID: "A", Expr: `x{job=~"$job",instance=~"$instance"}`}}}
	}
	dash := func(second obsPanel) obsDashboard {
		d := obsDashboard{SchemaVersion: 39, UID: "u", Title: "t", Panels: []obsPanel{panel(&one, &zero), second},
			Templating: obsTemplating{List: []obsVariable{{Name: "job", Type: "query", Datasource: ds},
				{Name: "instance", Type: "query", Datasource: ds}}}}
		d.Inputs = append(d.Inputs, struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			PluginID string `json:"pluginId"`
		}{"DS_PROMETHEUS", "datasource", "prometheus"})
		return d
	}
	if errs := obsCheckDashboard(dash(panel(&two, &twelve))); len(errs) > 0 {
		t.Fatalf("a valid dashboard: %v", errs)
	}
	for _, tc := range []struct {
		what   string
		modify func(p *obsPanel)
	}{
		{"no datasource", func(p *obsPanel) { p.Datasource = nil }},
		{"no targets", func(p *obsPanel) { p.Targets = nil }},
		{"an empty expr", func(p *obsPanel) { p.Targets = []obsTarget{{RefID: "A"}} }},
		{"an unfiltered selector", func(p *obsPanel) { p.Targets = []obsTarget{{RefID: "A", Expr: "x"}} }},
		{"a bad expr", func(p *obsPanel) { p.Targets = []obsTarget{{RefID: "A", Expr: "rate(x"}} }},
		{"a repeated refId", func(p *obsPanel) { p.Targets = append(p.Targets, p.Targets[0]) }},
		{"a foreign datasource", func(p *obsPanel) { p.Datasource = &obsDatasource{Type: "loki", UID: "x"} }},
		{"the first panel's id", func(p *obsPanel) { p.ID = &one }},
		{"no id", func(p *obsPanel) { p.ID = nil }},
		{"an overlapping gridPos", func(p *obsPanel) { p.GridPos = grid(&six, &twelve) }},
		{"a gridPos past column 24", func(p *obsPanel) { p.GridPos = grid(&twelve, &twentyfour) }},
		{"no gridPos", func(p *obsPanel) { p.GridPos = nil }},
	} {
		second := panel(&two, &twelve)
		tc.modify(&second)
		if errs := obsCheckDashboard(dash(second)); len(errs) == 0 {
			t.Errorf("a dashboard with %s: no error", tc.what)
		}
	}
	for _, bad := range []string{
		"groups:\n  - name: g\n    rules:\n      - record: x\n        expr: y\n",
		"groups:\n  - name: g\n    rules:\n      - alert: RonX\n        expr up\n",
	} {
		if _, err := obsParseAlerts(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	rules, err := obsParseAlerts("groups:\n  - name: g\n    rules:\n      - alert: ronLower\n        expr: |\n          rate(x[5m\n        labels:\n          severity: page\n")
	if err != nil || len(obsCheckAlerts(rules)) < 3 {
		t.Errorf("a rule with a bad name, expr, severity and no annotations: %v, %v", err, obsCheckAlerts(rules))
	}
}
