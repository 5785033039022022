#include "io/zip_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>

#include "io/crc32.h"
#include "io/durable_file.h"

namespace kiln {

namespace {

constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint16_t kVersion = 20;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // a fixed time: the same inputs give the same bytes
constexpr int64_t kMaxZip32 = 0xFFFFFFFELL;  // 0xFFFFFFFF itself means "see ZIP64"
constexpr uint16_t kUtf8Names = 0x0800;    // general-purpose flag bit 11: the name is UTF-8

uint16_t name_flags(const std::string& name) {
  for (const char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) return kUtf8Names;
  }
  return 0;
}

class LittleEndian {
 public:
  LittleEndian& u16(uint32_t v) { return bytes(v, 2); }
  LittleEndian& u32(uint64_t v) { return bytes(v, 4); }
  LittleEndian& text(const std::string& s) {
    m_out += s;
    return *this;
  }
  const std::string& str() const { return m_out; }

 private:
  LittleEndian& bytes(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) m_out += static_cast<char>((v >> (8 * i)) & 0xFF);
    return *this;
  }
  std::string m_out;
};

struct Stored {
  uint32_t crc = 0;
  int64_t size = 0;
  int64_t offset = 0;
};

std::string local_header(const std::string& name, const Stored& s) {
  LittleEndian h;
  h.u32(kLocalSignature).u16(kVersion).u16(name_flags(name)).u16(0).u16(0).u16(kDosDate1980);
  h.u32(s.crc).u32(static_cast<uint64_t>(s.size)).u32(static_cast<uint64_t>(s.size));
  h.u16(static_cast<uint32_t>(name.size())).u16(0).text(name);
  return h.str();
}

// Copies the member after a placeholder header, then writes the header with its
// CRC and size.
Status member_store(int fd, const ZipMember& member, int64_t* offset, Stored* stored, const std::string& what) {
  const int in = ::open(member.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return errno_status(member.path + ": cannot open");
  FdCloser closer(in);
  stored->offset = *offset;
  const int64_t data_start = *offset + static_cast<int64_t>(local_header(member.name, *stored).size());
  std::vector<char> buffer(1 << 20);
  Crc32 crc;
  while (true) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(member.path + ": read failed");
    if (n == 0) break;
    KILN_TRY(fd_pwrite_all(fd, buffer.data(), static_cast<size_t>(n), data_start + stored->size, what));
    crc.update(buffer.data(), static_cast<size_t>(n));
    stored->size += n;
    if (stored->size > kMaxZip32) return invalid_argument(what + ": " + member.name + " is over 4 GiB; use .h5");
  }
  stored->crc = crc.value();
  const std::string header = local_header(member.name, *stored);
  KILN_TRY(fd_pwrite_all(fd, header.data(), header.size(), stored->offset, what));
  *offset = data_start + stored->size;
  return Status::ok();
}

}  // namespace

Status zip_store_write(int fd, const std::vector<ZipMember>& members, const std::string& what) {
  if (members.size() > 0xFFFF) return invalid_argument(what + ": more than 65535 arrays");
  int64_t offset = 0;
  std::vector<Stored> stored(members.size());
  for (size_t i = 0; i < members.size(); ++i) KILN_TRY(member_store(fd, members[i], &offset, &stored[i], what));
  if (offset > kMaxZip32) return invalid_argument(what + ": the archive is over 4 GiB; use .h5");
  LittleEndian directory;
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string& name = members[i].name;
    directory.u32(kCentralSignature).u16(kVersion).u16(kVersion).u16(name_flags(name)).u16(0).u16(0);
    directory.u16(kDosDate1980);
    directory.u32(stored[i].crc).u32(static_cast<uint64_t>(stored[i].size)).u32(static_cast<uint64_t>(stored[i].size));
    directory.u16(static_cast<uint32_t>(name.size())).u16(0).u16(0).u16(0).u16(0).u32(0);
    directory.u32(static_cast<uint64_t>(stored[i].offset)).text(name);
  }
  LittleEndian end;
  end.u32(kEndSignature).u16(0).u16(0).u16(static_cast<uint32_t>(members.size()));
  end.u16(static_cast<uint32_t>(members.size())).u32(directory.str().size()).u32(static_cast<uint64_t>(offset)).u16(0);
  const std::string tail = directory.str() + end.str();
  return fd_pwrite_all(fd, tail.data(), tail.size(), offset, what);
}

}  // namespace kiln
