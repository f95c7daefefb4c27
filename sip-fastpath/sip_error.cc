// Tables of SIP error names and descriptions, expanded from SBC_SIP_ERRORS. Any thread.
#include "sip-fastpath/sip_error.h"

#include <array>

namespace sbc::sip {
namespace {

constexpr std::array<std::string_view, error_count> names = {
    "none",
#define SBC_SIP_ERROR_NAME(name, text) #name,
    SBC_SIP_ERRORS(SBC_SIP_ERROR_NAME)
#undef SBC_SIP_ERROR_NAME
};

constexpr std::array<std::string_view, error_count> texts = {
    "no error",
#define SBC_SIP_ERROR_TEXT(name, text) text,
    SBC_SIP_ERRORS(SBC_SIP_ERROR_TEXT)
#undef SBC_SIP_ERROR_TEXT
};

}  // namespace

std::string_view error_name(error e) noexcept {
  auto i = static_cast<unsigned>(e);
  return i < error_count ? names[i] : std::string_view{"unknown"};
}

std::string_view error_text(error e) noexcept {
  auto i = static_cast<unsigned>(e);
  return i < error_count ? texts[i] : std::string_view{"unknown error"};
}

}  // namespace sbc::sip
