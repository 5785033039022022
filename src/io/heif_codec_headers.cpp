#include "io/heif_codec_headers.h"

#include <string>

namespace kiln {

namespace {

constexpr int kHevcSpsType = 33;
constexpr int kAv1SequenceHeaderType = 1;
// An SPS reaches the picture size within about 130 bytes (profile_tier_level with 7 sub-layers, five ue(v) fields).
constexpr size_t kSpsPrefixBytes = 512;

// MSB-first bits; reading past the end gives 0 and clears ok().
class BitReader {
 public:
  BitReader(const uint8_t* data, size_t size) : m_data(data), m_bits(size * 8) {}
  uint64_t bits(int count) {
    uint64_t value = 0;
    for (int i = 0; i < count; ++i) value = value << 1 | bit();
    return value;
  }
  uint32_t bit() {
    if (m_pos >= m_bits) {
      m_ok = false;
      return 0;
    }
    const uint32_t b = m_data[m_pos >> 3] >> (7 - (m_pos & 7)) & 1;
    ++m_pos;
    return b;
  }
  void skip(size_t count) {
    if (count > m_bits - m_pos) m_ok = false;
    m_pos = count > m_bits - m_pos ? m_bits : m_pos + count;
  }
  // Exp-Golomb ue(v), up to 2^32 - 2.
  uint64_t ue() {
    int zeros = 0;
    while (ok() && bit() == 0) {
      if (++zeros > 31) {
        m_ok = false;
        return 0;
      }
    }
    return (uint64_t{1} << zeros) - 1 + bits(zeros);
  }
  // AV1's uvlc().
  uint64_t uvlc() {
    int zeros = 0;
    while (ok() && bit() == 0) ++zeros;
    if (zeros >= 32) return (uint64_t{1} << 32) - 1;
    return bits(zeros) + (uint64_t{1} << zeros) - 1;
  }
  bool ok() const { return m_ok; }

 private:
  const uint8_t* m_data;
  size_t m_bits;
  size_t m_pos = 0;
  bool m_ok = true;
};

Status header_unreadable(const char* what) { return unsupported_format(std::string("heif: cannot read ") + what); }

// The NAL unit's payload as RBSP: every 0x000003 loses its 03.
std::vector<uint8_t> hevc_rbsp_prefix(ByteSpan nal) {
  std::vector<uint8_t> rbsp;
  int zeros = 0;
  for (size_t i = 2; i < nal.size && rbsp.size() < kSpsPrefixBytes; ++i) {
    if (zeros >= 2 && nal.data[i] == 3) {
      zeros = 0;
      continue;
    }
    zeros = nal.data[i] == 0 ? zeros + 1 : 0;
    rbsp.push_back(nal.data[i]);
  }
  return rbsp;
}

void hevc_skip_profile_tier_level(BitReader& in, int max_sub_layers_minus1) {
  in.skip(88 + 8);  // general profile (space, tier, idc, compatibility flags, constraint flags) and level
  bool profile_present[8] = {};
  bool level_present[8] = {};
  for (int i = 0; i < max_sub_layers_minus1; ++i) {
    profile_present[i] = in.bit() != 0;
    level_present[i] = in.bit() != 0;
  }
  if (max_sub_layers_minus1 > 0) in.skip(2 * (8 - max_sub_layers_minus1));
  for (int i = 0; i < max_sub_layers_minus1; ++i) in.skip((profile_present[i] ? 88 : 0) + (level_present[i] ? 8 : 0));
}

}  // namespace

Result<CodedSize> hevc_sps_coded_size(ByteSpan nal) {
  if (nal.size < 2 || (nal.data[0] >> 1 & 63) != kHevcSpsType) return header_unreadable("an HEVC SPS (not one)");
  const std::vector<uint8_t> rbsp = hevc_rbsp_prefix(nal);
  BitReader in(rbsp.data(), rbsp.size());
  in.skip(4);  // sps_video_parameter_set_id
  const int max_sub_layers_minus1 = static_cast<int>(in.bits(3));
  in.skip(1);  // sps_temporal_id_nesting_flag
  hevc_skip_profile_tier_level(in, max_sub_layers_minus1);
  in.ue();  // sps_seq_parameter_set_id
  if (in.ue() == 3) in.skip(1);  // chroma_format_idc 4:4:4 carries separate_colour_plane_flag
  const uint64_t width = in.ue();
  const uint64_t height = in.ue();
  if (!in.ok()) return header_unreadable("an HEVC SPS (cut off before the picture size)");
  return CodedSize{static_cast<uint32_t>(width), static_cast<uint32_t>(height)};
}

Result<CodedSize> av1_sequence_coded_size(ByteSpan payload) {
  BitReader in(payload.data, payload.size);
  in.skip(3 + 1);  // seq_profile, still_picture
  const bool reduced = in.bit() != 0;
  if (reduced) {
    in.skip(5);  // seq_level_idx[0]
  } else {
    bool decoder_model_info = false;
    int buffer_delay_bits = 0;
    if (in.bit() != 0) {  // timing_info_present_flag
      in.skip(32 + 32);   // num_units_in_display_tick, time_scale
      if (in.bit() != 0) in.uvlc();  // equal_picture_interval: num_ticks_per_picture_minus_1
      decoder_model_info = in.bit() != 0;
      if (decoder_model_info) {
        buffer_delay_bits = static_cast<int>(in.bits(5)) + 1;
        in.skip(32 + 5 + 5);  // num_units_in_decoding_tick, the removal and presentation time lengths
      }
    }
    const bool initial_display_delay = in.bit() != 0;
    const int operating_points = static_cast<int>(in.bits(5)) + 1;
    for (int i = 0; i < operating_points && in.ok(); ++i) {
      in.skip(12);  // operating_point_idc
      if (in.bits(5) > 7) in.skip(1);  // seq_level_idx, then seq_tier
      if (decoder_model_info && in.bit() != 0) in.skip(2 * buffer_delay_bits + 1);
      if (initial_display_delay && in.bit() != 0) in.skip(4);
    }
  }
  const int width_bits = static_cast<int>(in.bits(4)) + 1;
  const int height_bits = static_cast<int>(in.bits(4)) + 1;
  const uint64_t width = in.bits(width_bits) + 1;
  const uint64_t height = in.bits(height_bits) + 1;
  if (!in.ok()) return header_unreadable("an AV1 sequence header (cut off before the frame size)");
  return CodedSize{static_cast<uint32_t>(width), static_cast<uint32_t>(height)};
}

Status hevc_config_sps(ByteSpan hvcc, std::vector<ByteSpan>& sps) {
  if (hvcc.size < 23) return header_unreadable("an hvcC box (cut off)");
  size_t pos = 23;
  const int arrays = hvcc.data[22];
  for (int a = 0; a < arrays; ++a) {
    if (hvcc.size - pos < 3) return header_unreadable("an hvcC box (cut off)");
    const size_t units = size_t{hvcc.data[pos + 1]} << 8 | hvcc.data[pos + 2];
    pos += 3;
    for (size_t u = 0; u < units; ++u) {
      if (hvcc.size - pos < 2) return header_unreadable("an hvcC box (cut off)");
      const size_t length = size_t{hvcc.data[pos]} << 8 | hvcc.data[pos + 1];
      pos += 2;
      if (hvcc.size - pos < length) return header_unreadable("an hvcC box (cut off)");
      // The NAL unit's own header decides, not the array's type: libde265 reads the unit.
      if (length >= 2 && (hvcc.data[pos] >> 1 & 63) == kHevcSpsType) sps.push_back({hvcc.data + pos, length});
      pos += length;
    }
  }
  return Status::ok();
}

void hevc_stream_sps(ByteSpan data, std::vector<ByteSpan>& sps) {
  size_t pos = 0;
  while (data.size - pos >= 4) {
    const size_t length = size_t{data.data[pos]} << 24 | size_t{data.data[pos + 1]} << 16 |
                          size_t{data.data[pos + 2]} << 8 | data.data[pos + 3];
    pos += 4;
    if (length > data.size - pos) return;
    if (length >= 2 && (data.data[pos] >> 1 & 63) == kHevcSpsType) sps.push_back({data.data + pos, length});
    pos += length;
  }
}

void av1_sequence_headers(ByteSpan obus, std::vector<ByteSpan>& headers) {
  size_t pos = 0;
  while (pos < obus.size) {
    const uint8_t header = obus.data[pos++];
    const int type = header >> 3 & 15;
    if ((header & 4) != 0) ++pos;  // obu_extension_header
    if (pos > obus.size) return;
    size_t payload = obus.size - pos;
    if ((header & 2) != 0) {  // obu_has_size_field: leb128
      uint64_t value = 0;
      int i = 0;
      for (; i < 8; ++i) {
        if (pos >= obus.size) return;
        const uint8_t byte = obus.data[pos++];
        value |= uint64_t{byte & 0x7Fu} << (7 * i);
        if ((byte & 0x80) == 0) break;
      }
      if (i == 8 || value > obus.size - pos) return;
      payload = static_cast<size_t>(value);
    }
    if (type == kAv1SequenceHeaderType) headers.push_back({obus.data + pos, payload});
    pos += payload;
  }
}

}  // namespace kiln
