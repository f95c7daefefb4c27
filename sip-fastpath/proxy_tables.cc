// Building the proxy tables' peer indexes (see proxy_tables.h). Control core only, while it
// builds a snapshot; workers only read the result.
#include "sip-fastpath/proxy_tables.h"

namespace sbc::sip {

void proxy_tables::index_peers()
{
    std::size_t size = 16;
    while (size < peers.size() * 2) size <<= 1;
    by_address_.assign(size, no_peer);
    by_endpoint_.assign(size, no_peer);
    const std::size_t mask = size - 1;
    auto place = [mask](std::vector<uint32_t>& index, uint64_t h, uint32_t p) {
        std::size_t i = h & mask;
        while (index[i] != no_peer) i = (i + 1) & mask;
        index[i] = p;
    };
    for (uint32_t p = 0; p < peers.size(); ++p) {
        const peer& pe = peers[p];
        // One entry per distinct address, one per distinct endpoint: the first peer wins, as
        // the linear search did.
        if (!is_peer_address(pe.address)) place(by_address_, pe.address.hash(), p);
        if (find_peer(pe.address, pe.port) == no_peer) place(by_endpoint_, pe.address.hash() ^ pe.port, p);
    }
}

}  // namespace sbc::sip
