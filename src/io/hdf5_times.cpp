#include "io/hdf5_times.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace kiln::hdf5 {

namespace {

uint32_t rot(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

uint64_t le64(const uint8_t* p) { return le32(p) | static_cast<uint64_t>(le32(p + 4)) << 32; }

// Superblock versions 2 and 3 (HDF5 file format spec, "Superblock"): signature 8, version 1, sizes of offsets and
// lengths 1 + 1, consistency flags 1, then the base, superblock extension, end-of-file and root group addresses.
constexpr size_t kSuperblockExtensionAt = 20;
// Object header version 2: "OHDR", version, flags, then four 32-bit times when flag bit 5 is set, two 16-bit
// attribute-storage limits when bit 4 is, the size of chunk #0 in 1 << (flags & 3) bytes, the messages, a checksum.
constexpr uint8_t kTimesStored = 0x20, kAttributeLimitsStored = 0x10;

}  // namespace

uint32_t checksum_lookup3(const uint8_t* k, size_t length, uint32_t initval) {
  uint32_t a = 0xdeadbeef + static_cast<uint32_t>(length) + initval, b = a, c = a;
  const auto mix = [&] {
    a -= c, a ^= rot(c, 4), c += b;
    b -= a, b ^= rot(a, 6), a += c;
    c -= b, c ^= rot(b, 8), b += a;
    a -= c, a ^= rot(c, 16), c += b;
    b -= a, b ^= rot(a, 19), a += c;
    c -= b, c ^= rot(b, 4), b += a;
  };
  while (length > 12) {
    a += le32(k), b += le32(k + 4), c += le32(k + 8);
    mix();
    length -= 12;
    k += 12;
  }
  if (length == 0) return c;
  std::array<uint8_t, 12> tail{};  // the last 1-12 bytes, zero-padded: the same sums as lookup3's switch
  std::memcpy(tail.data(), k, length);
  a += le32(tail.data()), b += le32(tail.data() + 4), c += le32(tail.data() + 8);
  c ^= b, c -= rot(b, 14);
  a ^= c, a -= rot(c, 11);
  b ^= a, b -= rot(a, 25);
  c ^= b, c -= rot(b, 16);
  a ^= c, a -= rot(c, 4);
  b ^= a, b -= rot(a, 14);
  c ^= b, c -= rot(b, 24);
  return c;
}

Status superblock_extension_times_clear(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "r+b"), &std::fclose);
  if (!file) return Status(Errc::kIoError, path + ": cannot open to clear its HDF5 times");
  std::array<uint8_t, 48> super{};
  if (std::fread(super.data(), 1, super.size(), file.get()) != super.size() ||
      std::memcmp(super.data(), "\x89HDF\r\n\x1a\n", 8) != 0) {
    return Status(Errc::kUnsupportedFormat, path + ": not an HDF5 file");
  }
  if ((super[8] != 2 && super[8] != 3) || super[9] != 8) return Status::ok();  // no extension in older superblocks
  const uint64_t at = le64(super.data() + kSuperblockExtensionAt);
  if (at == ~uint64_t{0}) return Status::ok();  // no superblock extension
  std::vector<uint8_t> header(4096);
  if (std::fseek(file.get(), static_cast<long>(at), SEEK_SET) != 0) {
    return Status(Errc::kIoError, path + ": cannot seek to the superblock extension");
  }
  header.resize(std::fread(header.data(), 1, header.size(), file.get()));
  if (header.size() < 6 || std::memcmp(header.data(), "OHDR", 4) != 0 || header[4] != 2) {
    return Status(Errc::kUnsupportedFormat, path + ": the superblock extension is not a version 2 object header");
  }
  const uint8_t flags = header[5];
  if ((flags & kTimesStored) == 0) return Status::ok();
  const size_t size_at = 6 + 16 + ((flags & kAttributeLimitsStored) != 0 ? 4 : 0);
  const size_t size_bytes = size_t{1} << (flags & 3);
  if (header.size() < size_at + size_bytes) return Status(Errc::kUnsupportedFormat, path + ": object header cut short");
  uint64_t chunk = 0;
  for (size_t i = 0; i < size_bytes; ++i) chunk |= static_cast<uint64_t>(header[size_at + i]) << (8 * i);
  const size_t checksum_at = size_at + size_bytes + static_cast<size_t>(chunk);
  if (header.size() < checksum_at + 4 ||
      checksum_lookup3(header.data(), checksum_at) != le32(header.data() + checksum_at)) {
    return Status(Errc::kUnsupportedFormat, path + ": the superblock extension's checksum does not match");
  }
  std::memset(header.data() + 6, 0, 16);
  const uint32_t sum = checksum_lookup3(header.data(), checksum_at);
  for (int i = 0; i < 4; ++i) header[checksum_at + i] = static_cast<uint8_t>(sum >> (8 * i));
  if (std::fseek(file.get(), static_cast<long>(at), SEEK_SET) != 0 ||
      std::fwrite(header.data(), 1, checksum_at + 4, file.get()) != checksum_at + 4 || std::fflush(file.get()) != 0) {
    return Status(Errc::kIoError, path + ": cannot write the cleared HDF5 times");
  }
  return Status::ok();
}

}  // namespace kiln::hdf5
