// ascrun cpu runtime: the statement of the kernel's Python the running core is at.
//
// The generated code calls ascrun::at(n) before each statement of the kernel's Python, n being the
// statement's place (from 1) in the frontend's list of sites, "file:line" each
// (shared/compiler/frontend.py writes the calls and the list), so a fault or warning names the
// statement as a compiler does. Messages write a site as the token "py#<n>" ("py#3: block 0: ..."),
// which the pipeline replaces by its "file:line": the kernel's library does not depend on where
// its author keeps it nor on the lines around its code. One store per statement; each core is a
// thread. Code built without the calls has no site, its messages none.
#pragma once

#include <cstdint>
#include <string>

#pragma GCC visibility push(hidden)

namespace ascrun {

struct Site {
    uint32_t n = 0;  // 0: none

    bool known() const { return n != 0; }
    bool operator==(const Site& o) const { return n == o.n; }
    // "py#<n>", or "" for none.
    std::string text() const { return known() ? "py#" + std::to_string(n) : std::string(); }
};

inline thread_local Site tls_site;

inline void at(uint32_t n) { tls_site = Site{n}; }

}  // namespace ascrun

#pragma GCC visibility pop
