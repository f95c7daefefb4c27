// Names of a call detail record's enumerations, for the JSON lines and sbcctl. Any thread.
#include "common/call_record.h"

namespace sbc {

std::string_view cdr_outcome_name(cdr_outcome o) noexcept
{
    switch (o) {
    case cdr_outcome::answered: return "answered";
    case cdr_outcome::code: return "code";
    case cdr_outcome::timeout: return "timeout";
    case cdr_outcome::icmp: return "icmp";
    case cdr_outcome::connection: return "connection";
    case cdr_outcome::cancelled: return "cancelled";
    case cdr_outcome::not_sent: return "not_sent";
    }
    return "unknown";
}

std::string_view cdr_end_name(cdr_end e) noexcept
{
    switch (e) {
    case cdr_end::failed: return "failed";
    case cdr_end::cancelled: return "cancelled";
    case cdr_end::bye_caller: return "bye_caller";
    case cdr_end::bye_callee: return "bye_callee";
    case cdr_end::media_timeout: return "media_timeout";
    case cdr_end::bye_timeout: return "bye_timeout";
    case cdr_end::drain: return "drain";
    case cdr_end::refused: return "refused";
    }
    return "unknown";
}

std::string_view cdr_final_by_name(cdr_final_by f) noexcept
{
    switch (f) {
    case cdr_final_by::none: return "none";
    case cdr_final_by::peer: return "peer";
    case cdr_final_by::sbc: return "sbc";
    }
    return "unknown";
}

}  // namespace sbc
