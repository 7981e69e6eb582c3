// Test helper for the cheats in this folder: what a candidate with the user's rights can do to the
// runner that loaded it. The runner's code is in its process, so its GOT (the table of addresses
// it calls libc and LibTorch through) is the candidate's to rewrite once it is made writable.
#pragma once
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

// Points the GOT entries for `symbol` in the loaded object whose path contains `object` ("" = the
// main program) at `repl`. Returns the symbol's real address (nullptr when the object calls no such
// symbol). Not the GOT's old value: with lazy binding that is the resolver's stub, which would put
// the real address back on its first call.
inline void* kopt_hook_got(const char* object, const char* symbol, void* repl) {
  struct Ctx {
    const char* object;
    const char* symbol;
    void* repl;
    void* old;
  } ctx{object, symbol, repl, nullptr};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* p) -> int {
        auto* c = static_cast<Ctx*>(p);
        const char* name = info->dlpi_name ? info->dlpi_name : "";
        if (c->object[0] ? std::strstr(name, c->object) == nullptr : name[0] != 0) return 0;
        const ElfW(Dyn)* dyn = nullptr;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        if (!dyn) return 0;
        uintptr_t jmprel = 0, rela = 0, symtab = 0, strtab = 0;
        size_t jmpsz = 0, relasz = 0;
        for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
          switch (d->d_tag) {
            case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
            case DT_PLTRELSZ: jmpsz = d->d_un.d_val; break;
            case DT_RELA: rela = d->d_un.d_ptr; break;
            case DT_RELASZ: relasz = d->d_un.d_val; break;
            case DT_SYMTAB: symtab = d->d_un.d_ptr; break;
            case DT_STRTAB: strtab = d->d_un.d_ptr; break;
          }
        }
        auto fix = [&](uintptr_t a) { return a && a < info->dlpi_addr ? a + info->dlpi_addr : a; };
        jmprel = fix(jmprel), rela = fix(rela), symtab = fix(symtab), strtab = fix(strtab);
        if (!symtab || !strtab) return 0;
        auto patch = [&](uintptr_t tab, size_t bytes) {
          if (!tab) return;
          const auto* r = reinterpret_cast<const ElfW(Rela)*>(tab);
          for (size_t k = 0; k < bytes / sizeof(ElfW(Rela)); ++k) {
            const auto type = ELF64_R_TYPE(r[k].r_info);
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
            const auto* s = reinterpret_cast<const ElfW(Sym)*>(symtab) + ELF64_R_SYM(r[k].r_info);
            if (std::strcmp(reinterpret_cast<const char*>(strtab) + s->st_name, c->symbol) != 0) continue;
            auto** slot = reinterpret_cast<void**>(info->dlpi_addr + r[k].r_offset);
            const uintptr_t page = reinterpret_cast<uintptr_t>(slot) & ~uintptr_t(4095);
            mprotect(reinterpret_cast<void*>(page), 8192, PROT_READ | PROT_WRITE);
            if (!c->old) c->old = dlsym(RTLD_DEFAULT, c->symbol);
            *slot = c->repl;
          }
        };
        patch(jmprel, jmpsz);
        patch(rela, relasz);
        return c->old ? 1 : 0;
      },
      &ctx);
  return ctx.old;
}

// Rewrites the runner's replies of kind `kind` ('D' done, 'K' ok ...) on their way to the judge: a
// GOT hook on write calls `edit` on a copy of each such reply's fixed part before it is written.
template <class Edit>
inline void kopt_edit_replies(uint32_t kind, Edit edit) {
  static uint32_t s_kind;
  static Edit* s_edit;
  static ssize_t (*real_write)(int, const void*, size_t);
  s_kind = kind;
  s_edit = new Edit(edit);
  real_write = reinterpret_cast<ssize_t (*)(int, const void*, size_t)>(kopt_hook_got(
      "", "write", reinterpret_cast<void*>(+[](int fd, const void* b, size_t n) -> ssize_t {
        uint32_t k = 0;
        if (fd == 4 && n >= 16) std::memcpy(&k, b, 4);
        if (k != s_kind) return real_write(fd, b, n);
        char copy[256];
        const size_t m = n < sizeof copy ? n : sizeof copy;
        std::memcpy(copy, b, m);
        (*s_edit)(copy);
        const ssize_t r = real_write(fd, copy, m);
        return r == ssize_t(m) && m < n ? r + real_write(fd, static_cast<const char*>(b) + m, n - m) : r;
      })));
}
