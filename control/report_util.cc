// Helpers shared by the control core's reports (see report_util.h).
#include "control/report_util.h"

#include <algorithm>
#include <cstdio>

namespace sbc::control::report {

std::string fmt(const char* format, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string fmt_or_dash(const char* format, double v) { return v < 0 ? "-" : fmt(format, v); }

std::string prom_escape(std::string_view s)
{
    std::string out;
    for (char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string prom_labels(std::initializer_list<std::pair<const char*, std::string>> kv)
{
    std::string s = "{";
    for (const auto& [k, v] : kv) s += (s.size() > 1 ? "," : "") + std::string(k) + "=\"" + prom_escape(v) + "\"";
    return s + "}";
}

void prom_writer::family(std::string_view name, std::string_view type, std::string_view help)
{
    name_ = "sbc_" + std::string(name);
    out_ << "# HELP " << name_ << ' ' << help << "\n# TYPE " << name_ << ' ' << type << '\n';
}

void prom_writer::histogram(std::string_view name, std::string_view help, const std::vector<double>& le,
                            const std::vector<uint64_t>& counts, double sum)
{
    family(name, "histogram", help);
    const std::string base = name_;
    uint64_t total = 0;
    for (std::size_t i = 0; i <= le.size(); ++i) {
        total += i < counts.size() ? counts[i] : 0;
        out_ << base << "_bucket{le=\"" << (i < le.size() ? fmt("%g", le[i]) : std::string("+Inf")) << "\"} " << total
             << '\n';
    }
    out_ << base << "_sum " << fmt("%.6g", sum) << '\n' << base << "_count " << total << '\n';
}

std::string table_text(const std::vector<std::vector<std::string>>& rows, const std::string& indent)
{
    std::vector<std::size_t> width;
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], r[i].size());
        }
    std::string out;
    for (const auto& r : rows) {
        std::string line = indent;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

}  // namespace sbc::control::report
