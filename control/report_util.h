// Helpers shared by the control core's reports (stats.cc, sip_stats.cc, dns_report.cc,
// media_stats.cc): Prometheus text (families, samples, label escaping), number formatting and
// the column tables of sbcctl. Pure functions, no shared state.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace sbc::control::report {

/// snprintf of one double, e.g. fmt("%.1f", 2.25) -> "2.2".
std::string fmt(const char* format, double v);
/// fmt(format, v), or "-" when v < 0 (no value, e.g. no answer yet).
std::string fmt_or_dash(const char* format, double v);

/// A Prometheus label value escaped: backslash, double quote and newline.
std::string prom_escape(std::string_view s);
/// `{k1="v1",k2="v2"}` with the values escaped.
std::string prom_labels(std::initializer_list<std::pair<const char*, std::string>> kv);

/// Writes Prometheus text: one family (HELP and TYPE once), then its samples.
class prom_writer {
public:
    /// `name` without the `sbc_` prefix, which is added.
    void family(std::string_view name, std::string_view type, std::string_view help);
    /// `labels` as prom_labels makes them, or "" for none. Integers as they are, floating
    /// point as "%.6g".
    template <class T>
        requires std::is_arithmetic_v<T>
    void sample(const std::string& labels, T v)
    {
        out_ << name_ << labels << ' ';
        if constexpr (std::is_floating_point_v<T>)
            out_ << fmt("%.6g", static_cast<double>(v));
        else if constexpr (std::is_signed_v<T>)
            out_ << static_cast<int64_t>(v);
        else
            out_ << static_cast<uint64_t>(v);
        out_ << '\n';
    }
    /// A family with one unlabelled sample.
    template <class T>
    void single(std::string_view name, std::string_view type, std::string_view help, T v)
    {
        family(name, type, help);
        sample("", v);
    }
    /// A histogram family: cumulative `_bucket` samples for each upper bound in `le` and
    /// +Inf, then `_sum` and `_count`; `counts[i]` is the number of observations in bucket i
    /// alone (le.size() + 1 of them, the last above every bound).
    void histogram(std::string_view name, std::string_view help, const std::vector<double>& le,
                   const std::vector<uint64_t>& counts, double sum);
    /// A `# text` line (ignored by parsers).
    void comment(const std::string& text) { out_ << "# " << text << '\n'; }
    [[nodiscard]] std::string str() const { return out_.str(); }

private:
    std::ostringstream out_;
    std::string name_;
};

/// Left-aligned columns padded to their widest cell, two spaces apart, each line prefixed
/// with `indent`; trailing blanks trimmed.
std::string table_text(const std::vector<std::vector<std::string>>& rows, const std::string& indent = "");

/// A table built row by row; the first row is the header.
class text_table {
public:
    explicit text_table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    /// Rows added, the header not counted.
    [[nodiscard]] std::size_t size() const noexcept { return rows_.size() - 1; }
    [[nodiscard]] std::string render(const std::string& indent = "  ") const { return table_text(rows_, indent); }

private:
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace sbc::control::report
