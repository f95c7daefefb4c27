// cps_bench's proxy tables: hand-built, or from an sbc.toml through control's loader and
// builder (see cps_tables.h). Bench code only (main lcore, before the worker starts).
#include "tests/bench/cps_tables.h"

#include "control/config.h"
#include "control/proxy_build.h"

namespace sbc::bench {

namespace {

constexpr uint32_t sbc_ip = (198u << 24) | (18u << 16) | 1u;
constexpr uint32_t callee_ip = (198u << 24) | (18u << 16) | 11u;

std::shared_ptr<const sip::proxy_tables> hand_built()
{
    auto tables = std::make_shared<sip::proxy_tables>();
    sip::trunk tr;
    tr.name = "access";
    tr.address = ip_address::v4(sbc_ip);
    tr.port = 5060;
    tr.allow.push_back(ip_prefix{ip_address::v4(sbc_ip & 0xffffff00u), 24});
    tables->trunks.push_back(tr);
    sip::peer pe;
    pe.name = "r1/callee";
    pe.address = ip_address::v4(callee_ip);
    pe.port = 5060;
    pe.weight = 10;
    tables->peers.push_back(pe);
    tables->index_peers();
    tables->regions.push_back({"r1", {0}});
    tables->groups.push_back({"g1", {0}, sip::selector::srv});
    tables->routes.push_back({"default", sip::match_field::ruri_user, ".*", 0});
    tables->default_route = 0;
    for (uint16_t c : {408, 503, 504}) tables->retry.codes.set(c);
    // The bench drives the worker to 100 % busy on purpose: [overload] shedding would answer
    // new calls 503 (the generator counts them unexpected) instead of measuring them.
    tables->overload.enabled = false;
    return tables;
}

}  // namespace

std::shared_ptr<const sip::proxy_tables> cps_tables(const char* config_path, dataplane::interface_info& ifc,
                                                   std::string& error)
{
    if (config_path == nullptr || *config_path == '\0') return hand_built();
    const control::load_result r = control::load_config(config_path);
    if (!r.cfg) {
        error = r.errors.empty() ? std::string(config_path) + ": refused" : r.errors[0].to_string();
        return nullptr;
    }
    const control::config& cfg = *r.cfg;
    // The generator sends from 198.18.0.2 to 198.18.0.1:5060 and answers as 198.18.0.11:5060.
    if (cfg.interfaces.size() != 1 || cfg.interfaces[0].address.addr != ip_address::v4(sbc_ip)) {
        error = std::string(config_path) + ": expected one [[interface]] with address 198.18.0.1/24 (the generator's)";
        return nullptr;
    }
    ifc.name = cfg.interfaces[0].name;
    control::peer_ids ids;
    auto t = control::build_proxy_tables(cfg, {ifc}, 1, ids, error);
    if (t && t->find_peer(ip_address::v4(callee_ip), 5060) == sip::no_peer) {
        error = std::string(config_path) + ": expected the peer 198.18.0.11:5060 (the generator's callee)";
        return nullptr;
    }
    return t;
}

}  // namespace sbc::bench
