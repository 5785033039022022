// series_demo(): a synthetic OHLC random walk that is bit-identical on every platform. Everything below
// uses only IEEE-exact operations (+ - * /, sqrt, frexp, ldexp): the PRNG is xoshiro256** seeded by
// splitmix64, normals come from the polar Box-Muller method, and log/exp are written out here because
// libm's are not required to round the same way everywhere.
#include <cmath>
#include <cstdint>

#include "apps/render/series_panel.h"
#include "kiln/apps/render.h"

namespace kiln {

namespace {

constexpr double kStartPrice = 100.0;
constexpr double kSigma = 0.01;       // per-step log-return volatility
constexpr double kWickScale = 0.6;    // wicks reach up to kWickScale * kSigma beyond the body
constexpr double kLn2 = 0.6931471805599453;
constexpr double kSqrtHalf = 0.7071067811865476;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& s : m_state) s = splitmix64(sm);
  }

  uint64_t next() {
    const uint64_t result = rotl(m_state[1] * 5, 7) * 9;
    const uint64_t t = m_state[1] << 17;
    m_state[2] ^= m_state[0];
    m_state[3] ^= m_state[1];
    m_state[1] ^= m_state[2];
    m_state[0] ^= m_state[3];
    m_state[2] ^= t;
    m_state[3] = rotl(m_state[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t m_state[4];
};

// Natural log for x > 0: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh((m-1)/(m+1)).
double det_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < kSqrtHalf) {
    m *= 2.0;
    e -= 1;
  }
  const double t = (m - 1.0) / (m + 1.0);
  const double t2 = t * t;
  double series = 0.0;
  for (int k = 25; k >= 3; k -= 2) series = (series + 1.0 / k) * t2;  // t^2/3 + t^4/5 + ... + t^24/25
  return 2.0 * t * (1.0 + series) + static_cast<double>(e) * kLn2;
}

// e^x: x = k ln2 + r with |r| <= ln2 / 2, then a Taylor polynomial in r and an exact scaling by 2^k.
double det_exp(double x) {
  const double k = std::floor(x / kLn2 + 0.5);
  const double r = x - k * kLn2;
  double p = 1.0;
  for (int n = 18; n >= 1; --n) p = 1.0 + r * p / n;
  return std::ldexp(p, static_cast<int>(k));
}

// Standard normal deviates, two per accepted pair (polar Box-Muller).
class NormalSource {
 public:
  explicit NormalSource(Xoshiro256& rng) : m_rng(rng) {}

  double next() {
    if (m_has_spare) {
      m_has_spare = false;
      return m_spare;
    }
    for (;;) {
      const double u = 2.0 * m_rng.uniform() - 1.0;
      const double v = 2.0 * m_rng.uniform() - 1.0;
      const double s = u * u + v * v;
      if (s >= 1.0 || s == 0.0) continue;
      const double f = std::sqrt(-2.0 * det_log(s) / s);
      m_spare = v * f;
      m_has_spare = true;
      return u * f;
    }
  }

 private:
  Xoshiro256& m_rng;
  double m_spare = 0.0;
  bool m_has_spare = false;
};

}  // namespace

Series series_demo(int64_t points, uint64_t seed, bool volume) {
  Series series;
  const int32_t channels = volume ? 5 : 4;
  series.channels = channels;
  series.layers = volume ? 1 : 0;
  series.source = "demo";
  series.column = "Open,High,Low,Close";
  series.rows = points > 0 ? points : 0;
  series.values.resize(static_cast<size_t>(series.rows) * channels);

  // Trading days: the weekdays from Monday 2000-01-03 (day 10959 after 1970-01-01).
  series.dates.reserve(static_cast<size_t>(series.rows));
  for (int64_t i = 0, day = 10959; i < series.rows; ++day) {
    if ((day + 3) % 7 < 5) {  // (day + 3) % 7: 0 = Monday .. 6 = Sunday
      series.dates.push_back(date_of_day(day));
      ++i;
    }
  }

  Xoshiro256 rng(seed);
  Xoshiro256 volume_rng(seed ^ 0x766f6c756d65ULL);  // its own stream: the prices do not depend on `volume`
  NormalSource normal(rng);
  double close = kStartPrice;
  for (int64_t i = 0; i < series.rows; ++i) {
    const double open = close;
    close = open * det_exp(kSigma * normal.next());
    const double top = open > close ? open : close;
    const double bottom = open < close ? open : close;
    const double high = top * (1.0 + kWickScale * kSigma * rng.uniform());
    const double low = bottom * (1.0 - kWickScale * kSigma * rng.uniform());
    float* row = series.values.data() + i * channels;
    // Rounding to float is monotonic, so high >= max(open, close) and low <= min(open, close) still hold.
    row[kOpen] = static_cast<float>(open);
    row[kHigh] = static_cast<float>(high);
    row[kLow] = static_cast<float>(low);
    row[kClose] = static_cast<float>(close);
    // Busier on days that move more: a million shares a day times (0.5 .. 1.5) times (1 + 20 |return|).
    if (volume) row[4] = static_cast<float>(1e6 * (0.5 + volume_rng.uniform()) * (1.0 + 20.0 * std::fabs(close / open - 1.0)));
  }
  return series;
}

}  // namespace kiln
