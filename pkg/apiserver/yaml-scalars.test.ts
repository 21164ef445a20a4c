import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatGoFloat, goSyntax, resolvePlain } from './yaml-scalars.js';

// Expected strings are Go's: strconv.FormatFloat(f, 'g', -1, bits) and fmt's %+#v
// (checked with Go 1.19's fmt and strconv).
/**
 * float32 bit patterns and strconv.FormatFloat(float64(f), 'g', -1, 32) of each, as Go 1.19
 * printed them here: a sample of the 7,473 (of 3.8 million tried: a stride through every
 * float32, a million random ones, binade borders, small integers and thousandths) where
 * formatting by toExponential and Math.fround chose other digits, mostly exact ties.
 */
const GO_FLOAT32: readonly (readonly [number, string])[] = [
  [0x40f5a000, "7.6757812"], [0x45b6f540, "5854.6562"], [0x46b8eb20, "23669.562"], [0x470a9650, "35478.312"],
  [0x473925d0, "47397.812"], [0x4767b550, "59317.312"], [0x480af3a8, "142286.62"], [0x48223b68, "166125.62"],
  [0x48398328, "189964.62"], [0x4850cae8, "213803.62"], [0x486812a8, "237642.62"], [0x487f5a68, "261481.62"],
  [0x488b5264, "285331.12"], [0x4896f644, "309170.12"], [0x48a29a24, "333009.12"], [0x48ae3e04, "356848.12"],
  [0x48b9e1e4, "380687.12"], [0x48c585c4, "404526.12"], [0x48d129a4, "428365.12"], [0x48dccd84, "452204.12"],
  [0x48e87164, "476043.12"], [0x48f41544, "499882.12"], [0x48ffb924, "523721.12"], [0x4985a7ba, "1.0949032e+06"],
  [0x498b79aa, "1.1425812e+06"], [0x49914b9a, "1.1902592e+06"], [0x49971d8a, "1.2379372e+06"], [0x499cef7a, "1.2856152e+06"],
  [0x49a2c16a, "1.3332932e+06"], [0x49a8935a, "1.3809712e+06"], [0x49ae654a, "1.4286492e+06"], [0x49b4373a, "1.4763272e+06"],
  [0x49ba092a, "1.5240052e+06"], [0x49bfdb1a, "1.5716832e+06"], [0x49c5ad0a, "1.6193612e+06"], [0x49cb7efa, "1.6670392e+06"],
  [0x49d150ea, "1.7147172e+06"], [0x49d722da, "1.7623952e+06"], [0x49dcf4ca, "1.8100732e+06"], [0x49e2c6ba, "1.8577512e+06"],
  [0x49e898aa, "1.9054292e+06"], [0x49ee6a9a, "1.9531072e+06"], [0x49f43c8a, "2.0007852e+06"], [0x49fa0e7a, "2.0484632e+06"],
  [0x49ffe06a, "2.0961412e+06"], [0x4a02d265, "2.1433852e+06"], [0x4a05bb5d, "2.1910632e+06"], [0x4a08a455, "2.2387412e+06"],
  [0x4a0b8d4d, "2.2864192e+06"], [0x4a0e7645, "2.3340972e+06"], [0x4a115f3d, "2.3817752e+06"], [0x4a144835, "2.4294532e+06"],
  [0x4a17312d, "2.4771312e+06"], [0x4a1a1a25, "2.5248092e+06"], [0x4a1d031d, "2.5724872e+06"], [0x4a1fec15, "2.6201652e+06"],
  [0x4a22d50d, "2.6678432e+06"], [0x4a25be05, "2.7155212e+06"], [0x4a28a6fd, "2.7631992e+06"], [0x4a2b8ff5, "2.8108772e+06"],
  [0x4a2e78ed, "2.8585552e+06"], [0x4a3161e5, "2.9062332e+06"], [0x4a344add, "2.9539112e+06"], [0x4a3733d5, "3.0015892e+06"],
  [0x4a3a1ccd, "3.0492672e+06"], [0x4a3d05c5, "3.0969452e+06"], [0x4a3feebd, "3.1446232e+06"], [0x4a42d7b5, "3.1923012e+06"],
  [0x4a45c0ad, "3.2399792e+06"], [0x4a48a9a5, "3.2876572e+06"], [0x4a4b929d, "3.3353352e+06"], [0x4a4e7b95, "3.3830132e+06"],
  [0x4a51648d, "3.4306912e+06"], [0x4a544d85, "3.4783692e+06"], [0x4a57367d, "3.5260472e+06"], [0x4a5a1f75, "3.5737252e+06"],
  [0x4a5d086d, "3.6214032e+06"], [0x4a5ff165, "3.6690812e+06"], [0x4a62da5d, "3.7167592e+06"], [0x4a65c355, "3.7644372e+06"],
  [0x4a68ac4d, "3.8121152e+06"], [0x4a6b9545, "3.8597932e+06"], [0x4a6e7e3d, "3.9074712e+06"], [0x4a716735, "3.9551492e+06"],
  [0x4a74502d, "4.0028272e+06"], [0x4a773925, "4.0505052e+06"], [0x4a7a221d, "4.0981832e+06"], [0x4a7d0b15, "4.1458612e+06"],
  [0x4a7ff40d, "4.1935392e+06"], [0x4a61c1b5, "3.6987972e+06"], [0x49fc503a, "2.0669512e+06"], [0x4a5049ed, "3.4126032e+06"],
  [0x4a5f242d, "3.6559472e+06"], [0x49ec57e2, "1.9361242e+06"], [0x49c4e50a, "1.6129612e+06"], [0x48070828, "138272.62"],
  [0x48083588, "139478.12"], [0x4a340f71, "2.9501082e+06"], [0x4a0cfd69, "2.3099782e+06"], [0x4a2a1141, "2.7863842e+06"],
  [0x4a2e68e9, "2.8575302e+06"], [0x49948b9a, "1.2168832e+06"], [0x45b1ef40, "5693.9062"], [0x4895f564, "307115.12"],
  [0x48a52874, "338243.62"], [0x477165d0, "61797.812"], [0x48f95394, "510620.62"], [0x4a16683d, "2.4642712e+06"],
  [0x4a338e8d, "2.9418592e+06"], [0x4a0991b9, "2.2539342e+06"], [0x4a198209, "2.5150742e+06"], [0x498c952a, "1.1516532e+06"],
  [0x4a39bba5, "3.0430492e+06"], [0x4a583fdd, "3.5430312e+06"], [0x4a2ea45d, "2.8613352e+06"], [0x499ef932, "1.3023102e+06"],
  [0x49f3bc2a, "1.9966772e+06"], [0x4a2669a9, "2.7265062e+06"], [0x4a48d419, "3.2903742e+06"], [0x498793ca, "1.1106492e+06"],
  [0x4990e66a, "1.1870212e+06"],
];

function float32Of(bits: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, bits);
  return view.getFloat32(0);
}

describe('Go formatting of YAML values', () => {
  it('writes floats as strconv.FormatFloat(f, g, -1, 32 | 64)', () => {
    assert.equal(formatGoFloat(0.1, 32), '0.1');
    assert.equal(formatGoFloat(Math.PI, 32), '3.1415927');
    assert.equal(formatGoFloat(Math.PI, 64), '3.141592653589793');
    assert.equal(formatGoFloat(1e20, 64), '1e+20');
    assert.equal(formatGoFloat(123456789, 64), '1.23456789e+08');
    assert.equal(formatGoFloat(123456, 64), '123456');
    assert.equal(formatGoFloat(-0.00001, 64), '-1e-05');
    assert.equal(formatGoFloat(Infinity, 64), '+Inf');
    assert.equal(formatGoFloat(NaN, 32), 'NaN');
  });

  it("writes a float32 with Go's shortest digits, exact ties to even", () => {
    for (const [bits, want] of GO_FLOAT32) assert.equal(formatGoFloat(float32Of(bits), 32), want, `0x${bits.toString(16)}`);
    // Binade borders, subnormals and the extremes (Go's strings).
    assert.equal(formatGoFloat(float32Of(0x00000001), 32), '1e-45');
    assert.equal(formatGoFloat(float32Of(0x007fffff), 32), '1.1754942e-38');
    assert.equal(formatGoFloat(float32Of(0x00800000), 32), '1.1754944e-38');
    assert.equal(formatGoFloat(float32Of(0x7f7fffff), 32), '3.4028235e+38');
    assert.equal(formatGoFloat(float32Of(0x4b800000), 32), '1.6777216e+07');
    assert.equal(formatGoFloat(-float32Of(0x40f5a000), 32), '-7.6757812');
  });

  it('prints resolved scalars as %+#v does', () => {
    assert.equal(goSyntax(resolvePlain('1.0')), '1');
    assert.equal(goSyntax(resolvePlain('1e21')), '1e+21');
    assert.equal(goSyntax(resolvePlain('~')), '<nil>');
    assert.equal(goSyntax(resolvePlain('on')), 'true');
    assert.equal(goSyntax(resolvePlain('x\ty')), '"x\\ty"');
    assert.equal(goSyntax(resolvePlain('18446744073709551615')), '0xffffffffffffffff');
  });
});
