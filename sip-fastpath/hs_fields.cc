// Hyperscan databases per match field, scratch per worker (see hs_fields.h). compile_field(),
// make_scratch() and the destructor: control core. scan(): worker `w`, with its own scratch.
#include "sip-fastpath/hs_fields.h"

#include <hs/hs.h>

namespace sbc::sip {

bool hs_fields::platform_ok(std::string& error)
{
    if (hs_valid_platform() == HS_SUCCESS) return true;
    error = "Hyperscan needs a CPU with SSSE3; this one has not";
    return false;
}

hs_fields::~hs_fields()
{
    if (proto_ != nullptr) hs_free_scratch(proto_);
    for (hs_scratch* s : scratch_)
        if (s != nullptr) hs_free_scratch(s);
    for (hs_database* d : db_)
        if (d != nullptr) hs_free_database(d);
}

hs_fields::status hs_fields::compile_field(std::size_t f, const patterns& p, int& expression, std::string& message)
{
    if (p.empty()) return status::ok;
    hs_compile_error_t* ce = nullptr;
    if (hs_compile_multi(p.exprs.data(), p.flags.data(), p.ids.data(), static_cast<unsigned>(p.size()), HS_MODE_BLOCK,
                         nullptr, &db_[f], &ce) != HS_SUCCESS) {
        expression = ce != nullptr && ce->expression >= 0 && static_cast<std::size_t>(ce->expression) < p.size()
                         ? ce->expression
                         : -1;
        message = ce != nullptr ? ce->message : "unknown error";
        hs_free_compile_error(ce);
        return status::compile_failed;
    }
    if (hs_alloc_scratch(db_[f], &proto_) != HS_SUCCESS) return status::scratch_failed;
    return status::ok;
}

bool hs_fields::compile_field(std::size_t f, const patterns& p, std::string_view field, std::string_view what,
                              std::string& error)
{
    int bad = -1;
    std::string reason;
    switch (compile_field(f, p, bad, reason)) {
    case status::ok: return true;
    case status::compile_failed:
        error = (bad >= 0 ? "pattern \"" + std::string(p.exprs[static_cast<std::size_t>(bad)]) + "\"" : std::string("patterns")) +
                " on " + std::string(field) + " does not compile: " + reason;
        return false;
    case status::scratch_failed: break;
    }
    error = "Hyperscan cannot allocate scratch for the " + std::string(what) + " patterns";
    return false;
}

bool hs_fields::make_scratch(unsigned workers, std::string& error)
{
    if (proto_ == nullptr) {
        scratch_.assign(workers, nullptr);
        return true;
    }
    scratch_.reserve(workers);
    for (unsigned w = 0; w < workers; ++w) {
        hs_scratch* s = nullptr;
        if (hs_clone_scratch(proto_, &s) != HS_SUCCESS) {
            error = "Hyperscan cannot allocate scratch for worker " + std::to_string(w);
            return false;
        }
        scratch_.push_back(s);
    }
    hs_free_scratch(proto_);
    proto_ = nullptr;
    return true;
}

void hs_fields::scan(unsigned w, std::size_t f, std::string_view value, on_match cb, void* ctx) const noexcept
{
    // Block mode needs a non-null pointer even for an empty value.
    const char* data = value.empty() ? "" : value.data();
    hs_scan(db_[f], data, static_cast<unsigned>(value.size()), 0, scratch_[w], cb, ctx);
}

}  // namespace sbc::sip
