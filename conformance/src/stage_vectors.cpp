// numref conformance — the golden-vector stage: every file the MANIFEST lists, its sha256
// checked, its cases of the selected families and profiles run in batches.         spec §34.2
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "numref/conform/vectors.hpp"
#include "pool.hpp"
#include "run.hpp"
#include "vector_file.hpp"

namespace numref::conform::runner {

namespace fs = std::filesystem;

namespace {

// The text of a file the MANIFEST lists; its sha256 must be the MANIFEST's. Throws VectorError.
std::string read_listed_file(const std::string& dir, const ManifestEntry& e) {
  const fs::path path = fs::path(dir) / e.path;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw VectorError(e.path + ": listed in the MANIFEST but cannot be opened");
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (Sha256::hex(text) != e.sha256)
    throw VectorError(e.path +
                      ": sha256 differs from vectors/MANIFEST (edited by hand? regenerate with `numref "
                      "vectors generate`, or verify with `numref vectors verify`)");
  return text;
}

// A job's words read row by row, in the layout of its shape: column-major (case-major
// families keep the cases as read).
void to_batch_layout(Job& job) {
  const Shape s = job.params->shape();
  if (s.case_major) return;
  std::vector<std::uint32_t> in_c(job.n * static_cast<std::size_t>(s.in)),
      ex_c(job.n * static_cast<std::size_t>(s.out));
  for (std::size_t i = 0; i < job.n; ++i) {
    for (int w = 0; w < s.in; ++w)
      in_c[static_cast<std::size_t>(w) * job.n + i] =
          job.in[i * static_cast<std::size_t>(s.in) + static_cast<std::size_t>(w)];
    for (int w = 0; w < s.out; ++w)
      ex_c[static_cast<std::size_t>(w) * job.n + i] =
          job.exp[i * static_cast<std::size_t>(s.out) + static_cast<std::size_t>(w)];
  }
  job.in = std::move(in_c);
  job.exp = std::move(ex_c);
}

// The jobs of one vector file: consecutive cases of one suite share a job, queued when the
// suite changes or the job is full.
class FileJobs {
 public:
  FileJobs(Context& c, Pipeline& pipe, const std::string& file) : c_(c), pipe_(pipe), file_(file) {}

  void add(const VectorCase& vc, int line) {
    if (job_.n > 0 &&
        (job_.params->text() != vc.params->text() || job_.n >= 4096 || job_.n >= batch_limit(job_.params->shape())))
      flush();
    if (job_.n == 0) job_.params = vc.params;
    job_.in.insert(job_.in.end(), vc.in.begin(), vc.in.end());
    job_.exp.insert(job_.exp.end(), vc.expected.begin(), vc.expected.end());
    job_.lines.push_back(line);
    ++job_.n;
  }

  void flush() {
    if (job_.n == 0) return;
    job_.source = file_;
    job_.check_support = true;
    const ParamsPtr p = job_.params;
    job_.suite = c_.rep.suite(std::string(p->family().name()), p->profile(), p->label(), p->text(), file_);
    to_batch_layout(job_);
    pipe_.submit(std::move(job_));
    job_ = Job{};
  }

 private:
  Context& c_;
  Pipeline& pipe_;
  const std::string& file_;
  Job job_;
};

// Queues the cases of the file `e` that this run checks (its shard's lines, the --case line,
// the --ops selectors); false when its op family is not selected.
bool run_vector_file(Context& c, Pipeline& pipe, const Families& fams, const std::string& dir, const ManifestEntry& e) {
  std::istringstream in(read_listed_file(dir, e));
  VectorReader vr(in, e.path);
  const Family& fam = vector_family(vr, e.path);
  auto fit = std::find_if(fams.begin(), fams.end(), [&](const auto& p) { return p.first == &fam; });
  if (fit == fams.end()) return false;
  const auto reader = open_case_reader(fam, vr, e.path, c.rep.profiles);
  const auto [lo, hi] = shard_range(vr.declared_count(), c.cfg);
  std::vector<std::string_view> fields;
  std::string_view note;
  std::vector<VectorCase> cases;
  FileJobs jobs(c, pipe, e.path);
  std::uint64_t idx = 0;
  while (vr.next(fields, note)) {  // throws VectorError naming file and line
    const std::uint64_t k = idx++;
    read_case_line(*reader, vr, fields, note, cases);
    if (k < lo || k >= hi) continue;
    if (c.only && static_cast<std::uint64_t>(vr.line()) != c.only->line) continue;
    for (auto& vc : cases)
      if (selector_match(*vc.params, fit->second)) jobs.add(vc, vr.line());
  }
  jobs.flush();
  return true;
}

}  // namespace

void run_vectors(Context& c, Pipeline& pipe, Progress& prog, const Families& fams, const std::string& dir) {
  const auto man = read_manifest(dir);  // throws VectorError
  std::size_t files = 0;
  prog.start(c.rep.info.name + " vectors", 0);
  for (const auto& e : man) {
    if (pipe.failed() || stop_requested()) return;
    if (c.only && (c.only->generated || c.only->file != e.path)) continue;  // --case
    if (!run_vector_file(c, pipe, fams, dir, e)) continue;
    ++files;
    prog.advance(0);
  }
  pipe.drain();
  prog.finish();
  c.rep.vectors = dir + " (" + std::to_string(files) + " files, MANIFEST verified)";
}

}  // namespace numref::conform::runner
