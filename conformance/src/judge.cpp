// numref conformance — one job: its cases run on a backend and compared with the reference;
// the outcome of every case counted, the mismatches kept for the report.     spec §34.2–§34.6
#include <algorithm>

#include "numref/conform/util.hpp"
#include "run.hpp"

namespace numref::conform::runner {

namespace {

constexpr std::size_t kBatch = 32768;
// A batch also holds at most this many words of input and output per case array
// (2 MiB): tensor cases have thousands of words each (§34.3 memory bound).
constexpr std::size_t kBatchWords = std::size_t{1} << 19;

// §31.5 / §34.7 A golden vector whose expected value differs from the reference's (a file
// edited together with its MANIFEST line, or a reference that changed) is wrong, not the
// backend: the first such case stops the run as an input error (exit 2), named VECTOR WRONG.
bool vector_agrees(const Params& p, const Job& j, JobResult& r) {
  std::vector<std::uint32_t> ref(j.exp.size());
  p.expected(j.n, j.in.data(), ref.data());
  if (ref == j.exp) return true;
  const Shape s = p.shape();
  const std::size_t outw = static_cast<std::size_t>(s.out);
  for (std::size_t i = 0; i < j.n; ++i) {
    bool same = true;
    for (std::size_t w = 0; w < outw && same; ++w) {
      const std::size_t at = s.case_major ? i * outw + w : w * j.n + i;
      same = ref[at] == j.exp[at];
    }
    if (same) continue;
    const CaseView in = case_view(j.in.data(), j.n, i, s, s.in), e = case_view(j.exp.data(), j.n, i, s, s.out),
                   g = case_view(ref.data(), j.n, i, s, s.out);
    // an optional result the file does not record (kNotReported) is not compared
    if (compare(p, in, e, g, CompareOptions{}).outcome == Outcome::pass) continue;
    const MismatchText t = render_mismatch(p, in, e, g, CompareOptions{});
    r.error = "VECTOR WRONG: " + j.source + ":" + std::to_string(j.lines[i]) + ": " + std::string(p.family().name()) +
              " " + p.label() + " | " + t.inputs + " | the vector expects " + t.expected + " | the reference gives " +
              t.got + (t.detail.empty() ? "" : " | " + t.detail) +
              " (the golden vector disagrees with the reference; the backend is not judged on it: regenerate the "
              "vectors with `numref vectors generate`)";
    r.error_exit = kExitUsage;
    return false;
  }
  return true;
}

// A case with a tensor input (the tensor and MoR families): --dump-failures writes it.
bool is_tensor_case(const Params& p) {
  for (const Column& c : p.schema().columns)
    if (!c.output() && c.count() > 1 && c.format) return true;
  return false;
}

// A generated job's inputs and expected words (a vector job has them from its file).
void fill_generated(const Params& p, Job& j) {
  const Shape s = p.shape();
  j.in.resize(j.n * static_cast<std::size_t>(s.in));
  j.cases->fill(j.first, j.n, j.in.data());
  j.exp.resize(j.n * static_cast<std::size_t>(s.out));
  p.expected(j.n, j.in.data(), j.exp.data());
}

// Fast path: every output word of case i identical is a pass for every family.
bool same_words(const Job& j, const std::vector<std::uint32_t>& got, Shape s, std::size_t i) {
  const std::size_t outw = static_cast<std::size_t>(s.out);
  if (s.case_major)
    return std::equal(j.exp.begin() + static_cast<std::ptrdiff_t>(i * outw),
                      j.exp.begin() + static_cast<std::ptrdiff_t>((i + 1) * outw),
                      got.begin() + static_cast<std::ptrdiff_t>(i * outw));
  bool same = true;
  for (std::size_t w = 0; w < outw && same; ++w) same = j.exp[w * j.n + i] == got[w * j.n + i];
  return same;
}

// §34.5 The known departure the backend declares for a mismatch, or nullptr.
const Departure* departure_of(const Backend& b, const Params& p, const std::string& op, const std::string& formats,
                              const Finding& f) {
  for (const auto& d : b.info().departures)
    if (d.matches(op, formats, p.profile(), f.cls)) return &d;
  return nullptr;
}

// One case of the job, as the report lists it.
struct CaseAt {
  const Job& j;
  std::size_t i;
  CaseView in, exp, got;
  const CaseFault* crashed;  // §34.6 the case crashed the backend (nullptr: it did not)
};

Mismatch make_mismatch(const Context& c, const Params& p, const CaseAt& k, const Finding& f, const Departure* dep) {
  const Job& j = k.j;
  Mismatch m;
  m.op = std::string(p.family().name());
  m.label = p.label();
  m.params = p.text();
  m.where = j.cases ? "generated:" + suite_id(p) + "#" + std::to_string(j.first + k.i)
                    : j.source + ":" + std::to_string(j.lines[k.i]);
  MismatchText t = render_mismatch(p, k.in, k.exp, k.got, c.cmp);
  m.inputs = std::move(t.inputs);
  m.got = std::move(t.got);
  m.expected = std::move(t.expected);
  m.detail = std::move(t.detail);
  if (k.crashed) m.got = k.crashed->what, m.detail.clear();
  m.cls = f.cls;
  if (c.cfg.report == ReportFormat::json)
    m.fields = mismatch_fields(p, k.in, k.exp, k.got, c.cmp, j.cases ? std::string("generated") : j.source,
                               j.cases ? j.first + k.i : static_cast<std::uint64_t>(j.lines[k.i]),
                               k.crashed ? k.crashed->what : std::string());
  if (dep) {
    m.is_departure = true;
    m.departure = dep->why;
  }
  if (!c.cfg.dump_dir.empty() && !dep && is_tensor_case(p)) {
    m.dump_params = j.params;
    for (int w = 0; w < p.shape().in; ++w) m.dump_in.push_back(k.in[w]);
  }
  return m;
}

// A case whose words differ (or that crashed the backend): judged by the family, counted, and
// kept as a mismatch when the report needs it.
void judge_case(const Context& c, const Backend& b, const Params& p, const CaseAt& k, JobResult& r) {
  const Finding f = k.crashed ? Finding{Outcome::fail, "crash"} : compare(p, k.in, k.exp, k.got, c.cmp);
  if (f.outcome == Outcome::pass) {
    ++r.passed;
    return;
  }
  if (f.outcome == Outcome::pass_any_nan) {
    ++r.any_nan;
    return;
  }
  const std::string op(p.family().name());
  const Departure* dep = k.crashed ? nullptr : departure_of(b, p, op, p.formats(), f);
  if (dep) {
    ++r.departures;
    ++r.departure_classes[op + " " + f.cls];
  } else {
    ++r.failed;
  }
  // §34.4 the report file lists every mismatch; the terminal at most --max-errors per suite,
  // known departures only with --show-departures (or --strict, which fails them)
  const bool printed = !dep || c.cfg.show_departures || c.cfg.strict;
  if (c.keep_all || (printed && (c.cfg.max_errors == 0 || r.mismatches.size() < c.cfg.max_errors)))
    r.mismatches.push_back(make_mismatch(c, p, k, f, dep));
}

// Runs the job on the backend and judges every case.
void run_and_compare(const Context& c, Backend& b, const Job& j, JobResult& r) {
  const Params& p = *j.params;
  const Shape s = p.shape();
  std::vector<std::uint32_t> got(j.n * static_cast<std::size_t>(s.out), 0);
  b.run(p, j.n, j.in.data(), got.data());
  const std::vector<CaseFault>& faults = b.faults();  // §34.6 cases that crashed the backend
  auto fault = faults.begin();
  for (std::size_t i = 0; i < j.n; ++i) {
    const CaseFault* crashed = fault != faults.end() && fault->index == i ? &*fault++ : nullptr;
    if (!crashed && same_words(j, got, s, i)) {
      ++r.passed;
      continue;
    }
    const CaseAt k{j,
                   i,
                   case_view(j.in.data(), j.n, i, s, s.in),
                   case_view(j.exp.data(), j.n, i, s, s.out),
                   case_view(got.data(), j.n, i, s, s.out),
                   crashed};
    judge_case(c, b, p, k, r);
  }
}

}  // namespace

std::optional<bool> SupportCache::get(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = m_.find(key);
  if (it == m_.end()) return std::nullopt;
  return it->second;
}
void SupportCache::put(const std::string& key, bool v) {
  std::lock_guard<std::mutex> l(mu_);
  m_[key] = v;
}

std::size_t batch_limit(Shape s) {
  const std::size_t words = static_cast<std::size_t>(std::max(1, s.in + s.out));
  return std::max<std::size_t>(1, std::min(kBatch, kBatchWords / words));
}

std::string suite_id(const Params& p) {
  return hex(fnv1a64(std::string(p.family().name()) + " " + p.text()) >> 16, 12);
}

bool implements(const BackendInfo& i, std::string_view op) {
  return std::find(i.ops.begin(), i.ops.end(), op) != i.ops.end();
}

std::string skip_reason(Context& c, Backend& b, const Params& p) {
  if (!implements(b.info(), p.family().name()))
    return "in op families it does not implement: " + std::string(p.family().name());
  // §34.3 a suite that needs a later C ABI minor version than the backend's is declined for it,
  // without asking: the backend could not know the values it would be offered (§32.2)
  if (p.abi_minor() > b.info().abi_minor)
    return "need C ABI 1." + std::to_string(p.abi_minor()) + " values, the backend declares 1." +
           std::to_string(b.info().abi_minor) + ": " + std::string(p.family().name());
  const std::string key = std::string(p.family().name()) + "\n" + p.text();
  auto v = c.support.get(key);
  if (!v) {
    v = b.supported(p);
    c.support.put(key, *v);
  }
  return *v ? std::string() : "declined by its support query: " + std::string(p.family().name());
}

JobResult judge_job(Context& c, Backend& b, Job& j) {
  JobResult r;
  r.seq = j.seq;
  r.suite = j.suite;
  r.n = j.n;
  const Params& p = *j.params;
  try {
    if (!j.cases && !vector_agrees(p, j, r)) return r;
    if (j.check_support) {
      r.skip_reason = skip_reason(c, b, p);
      if (!r.skip_reason.empty()) {
        r.skipped = j.n;
        return r;
      }
    }
    if (j.cases) fill_generated(p, j);
    run_and_compare(c, b, j, r);
  } catch (const BackendError& e) {
    if (e.kind == BackendError::Kind::interrupted) {  // §34.6 the batch did not run
      r.n = 0;
      return r;
    }
    r.error = e.what();
    r.error_exit = kExitBackend;
  } catch (const std::exception& e) {
    r.error = std::string("internal error: ") + e.what();
    r.error_exit = kExitBackend;
  }
  return r;
}

}  // namespace numref::conform::runner
