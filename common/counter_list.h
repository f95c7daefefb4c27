// A list of counters or drop reasons written once, as X(name, "help") items, and expanded into
// an enum, its size, and its name and help tables (VPP's error lists): what the dataplane's drop
// reasons, the proxy's counters and the media counters are made of. Any thread; constexpr.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#define SBC_LIST_ENUM_ITEM(name, help) name,
#define SBC_LIST_NAME_ITEM(name, help) #name,
#define SBC_LIST_HELP_ITEM(name, help) help,

/// `enum class TYPE : uint8_t { one enumerator per item of LIST, count_ }`.
#define SBC_LIST_ENUM(TYPE, LIST) enum class TYPE : uint8_t { LIST(SBC_LIST_ENUM_ITEM) count_ }
/// The names ("ipv4_bad_checksum", stable metric labels) and help texts of LIST.
#define SBC_LIST_TEXTS(TYPE, LIST) \
    (::sbc::list_texts<TYPE>{{LIST(SBC_LIST_NAME_ITEM)}, {LIST(SBC_LIST_HELP_ITEM)}})

namespace sbc {

/// How many items a list enum has (its count_).
template <class E>
constexpr std::size_t list_size = static_cast<std::size_t>(E::count_);

template <class E>
struct list_texts {
    std::array<std::string_view, list_size<E>> names;
    std::array<std::string_view, list_size<E>> helps;

    [[nodiscard]] constexpr std::string_view name(E e) const noexcept { return names[static_cast<std::size_t>(e)]; }
    [[nodiscard]] constexpr std::string_view help(E e) const noexcept { return helps[static_cast<std::size_t>(e)]; }
};

}  // namespace sbc
