import PropertyBased
import Sync
import Testing

/// 2^33, the MPEG-TS timestamp period.
private let period33: Int64 = 8_589_934_592

private func unwrapAll(_ raws: [Int64], bits: Int = 33) -> (values: [Int64], wraps: Int) {
    var u = WrapUnwrapper(bits: bits)!
    let values = raws.map { u.unwrap($0) }
    return (values, u.wraps)
}

@Suite("WrapUnwrapper")
struct WrapUnwrapperTests {
    @Test("bits must be in 2…62", arguments: [-1, 0, 1, 63, 64, 100])
    func bitsOutOfRange(bits: Int) {
        #expect(WrapUnwrapper(bits: bits) == nil)
    }

    @Test("bits in range", arguments: [2, 33, 62])
    func bitsInRange(bits: Int) {
        #expect(WrapUnwrapper(bits: bits)?.bits == bits)
        #expect(WrapUnwrapper(bits: bits)?.wraps == 0)
    }

    @Test func mpegTS() {
        #expect(WrapUnwrapper.mpegTS.bits == 33)
    }

    @Test("a 33-bit counter that wraps forward once becomes continuous, one wrap counted")
    func forwardWrap() {
        // Continuous P−6006, P−3003, P, P+3003, P+6006 (P = 2^33) arrive as their values mod P.
        let raw: [Int64] = [8_589_928_586, 8_589_931_589, 0, 3003, 6006]
        let (values, wraps) = unwrapAll(raw)
        #expect(values == [8_589_928_586, 8_589_931_589, 8_589_934_592, 8_589_937_595, 8_589_940_598])
        #expect(wraps == 1)
    }

    @Test("B-frame reorder across the boundary: values behind the wrap stay behind")
    func reorderAcrossWrap() {
        // Interleaved continuous values P−3000, P+1000, P−1000, P+5000, P+2000, P+4000:
        // small steps back and forth across P; each raw value is the continuous one mod P.
        let raw: [Int64] = [8_589_931_592, 1000, 8_589_933_592, 5000, 2000, 4000]
        let (values, _) = unwrapAll(raw)
        #expect(values == [8_589_931_592, 8_589_935_592, 8_589_933_592, 8_589_939_592, 8_589_936_592,
                           8_589_938_592])
    }

    @Test("already continuous values beyond 2^33 pass unchanged, no wrap counted")
    func continuousPassThrough() {
        // Values that never wrapped, starting above 2^33 …
        let above: [Int64] = [period33 + 100, period33 + 3103, period33 + 6106, period33 + 5000, period33 + 9109]
        let (values, wraps) = unwrapAll(above)
        #expect(values == above)
        #expect(wraps == 0)
        // … or crossing 2^33 without being reduced.
        let crossing: [Int64] = [period33 - 3003, period33, period33 + 3003]
        let (crossed, crossWraps) = unwrapAll(crossing)
        #expect(crossed == crossing)
        #expect(crossWraps == 0)
    }

    @Test("a jump of more than half a period is read modulo the period")
    func bigJump() {
        // 2^40 ≡ 0 (mod 2^33) and the previous value 5000: the nearest congruent value is 0,
        // a correction of −2^40, counted as one wrap.
        let (values, wraps) = unwrapAll([5000, 1 << 40])
        #expect(values == [5000, 0])
        #expect(wraps == 1)
    }

    @Test("negative values and backward steps")
    func negativeValues() {
        let (values, wraps) = unwrapAll([0, -3000, -6000, 1000])
        #expect(values == [0, -3000, -6000, 1000])
        #expect(wraps == 0)
    }

    @Test("a jump of exactly half a period is read as backward")
    func halfPeriod() {
        // delta ≡ 2^32 (mod 2^33) lies in [−2^32, 2^32) only as −2^32.
        let (values, _) = unwrapAll([10, 10 + (1 << 32)])
        #expect(values == [10, 10 - (1 << 32)])
        // One less is forward.
        let (forward, _) = unwrapAll([10, 10 + (1 << 32) - 1])
        #expect(forward == [10, 10 + (1 << 32) - 1])
    }

    @Test("small widths: bits = 2 (period 4)")
    func tinyPeriod() {
        // Counter 0,1,2,3,0,1,… is continuous 0…7; steps of 1 are < half (2).
        let (values, wraps) = unwrapAll([0, 1, 2, 3, 0, 1, 2, 3], bits: 2)
        #expect(values == [0, 1, 2, 3, 4, 5, 6, 7])
        #expect(wraps == 1)
    }

    @Test("near Int64.max, a result that would overflow falls back to the raw value without trapping")
    func overflowFallsBack() {
        var u = WrapUnwrapper(bits: 62)!
        #expect(u.unwrap(.max - 10) == .max - 10)
        // 5 − (Int64.max − 10) ≡ 16 (mod 2^62): the continuous value Int64.max + 6 does not exist.
        #expect(u.unwrap(5) == 5)
    }

    @Test("any continuous sequence with steps under half a period is recovered exactly from its residues")
    func recoversContinuous() async {
        await propertyCheck(
            count: 500,
            input: Gen.int64(in: 0...(period33 - 1)),
            Gen.oneOf(Gen.int64(in: -3003...3003), Gen.int64(in: -(1 << 31)...(1 << 31))).array(of: 1...200)
        ) { start, steps in
            var continuous = [start]
            for s in steps { continuous.append(continuous.last! + s) }
            // Floor residue, so negative continuous values map into [0, 2^33) as well.
            let raw = continuous.map { (($0 % period33) + period33) % period33 }
            let (values, wraps) = unwrapAll(raw)
            #expect(values == continuous)
            // The correction is ⌊c/P⌋·P relative to the first value's epoch; each epoch
            // reached for the first time is one wrap. Steps under half a period visit
            // a contiguous range of epochs, so that is max − min.
            let epochs = continuous.map { $0 >= 0 ? $0 / period33 : ($0 + 1) / period33 - 1 }
            #expect(wraps == Int(epochs.max()! - epochs.min()!))
        }
    }

    @Test("values that do not wrap pass through unchanged")
    func identityOnContinuous() async {
        await propertyCheck(
            count: 500,
            input: Gen.int64(in: -(1 << 61)...(1 << 61)),
            Gen.int64(in: -(1 << 31)...(1 << 31)).array(of: 1...100)
        ) { start, steps in
            var continuous = [start]
            for s in steps { continuous.append(continuous.last! + s) }
            let (values, wraps) = unwrapAll(continuous)
            #expect(values == continuous)
            #expect(wraps == 0)
        }
    }
}
