// Random numbers: the Generator (PyTorch's mt19937, seeding and state bytes), and rand, randn, randint,
// uniform_, normal_ and the *_like samplers giving PyTorch 1.13's CPU values for the same seed. Expected values
// come from the installed PyTorch 1.13 (`torch.manual_seed(s); torch.rand(n)`...): the first elements as
// literals and a SHA-256 of all of them (float64 little-endian), so a failure shows where it starts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  empty,
  Generator,
  manualSeed,
  memoryStats,
  NotImplementedError,
  rand,
  randint,
  randintLike,
  randLike,
  randn,
  randnLike,
  type Tensor,
  zeros,
} from '../../mod.ts';
import { getRngState, initialSeed, RNG_STATE_BYTES, setRngState } from '../../core/tensor/generator.ts';
import { restride, values } from './_helpers.ts';

type FloatName = 'float32' | 'float64' | 'float16' | 'bfloat16';

/** The first 32 hex digits of the SHA-256 of the values as float64 little-endian. */
function digest(xs: number[]): string {
  const bytes = new Uint8Array(Float64Array.from(xs).buffer);
  return createHash('sha256').update(bytes).digest('hex').slice(0, 32);
}

function assertPyTorchValues(t: Tensor, head: number[], hash: string, what: string): void {
  const got = values(t);
  assert.deepEqual(got.slice(0, head.length), head, `${what}: first values`);
  assert.equal(digest(got), hash, `${what}: all values`);
}

// [sampler, dtype, seed, n, first values, digest]; uniform is uniform_(-2.5, 3.25), normal is normal_(1.5, 0.75).
const SAMPLES: Array<['rand' | 'randn' | 'uniform' | 'normal', FloatName, number, number, number[], string]> = [
  ['rand', 'float32', 0, 1, [0.49625658988952637], '692eeb3715b98f70be9566794f0f5cb9'],
  [
    'rand',
    'float32',
    0,
    7,
    [0.49625658988952637, 0.7682217955589294, 0.08847743272781372, 0.13203048706054688],
    'fb58fecffff8c5248b59ae5df156a1f8',
  ],
  [
    'rand',
    'float32',
    0,
    16,
    [0.49625658988952637, 0.7682217955589294, 0.08847743272781372, 0.13203048706054688],
    'bebf7503af1d7af3d31933db10f89b7d',
  ],
  [
    'rand',
    'float32',
    0,
    17,
    [0.49625658988952637, 0.7682217955589294, 0.08847743272781372, 0.13203048706054688],
    'b891b824f1e8b4fb2f4cb2d30fc3af64',
  ],
  [
    'rand',
    'float32',
    0,
    100,
    [0.49625658988952637, 0.7682217955589294, 0.08847743272781372, 0.13203048706054688],
    '81ae5d077644c7067b9348e1a126ab19',
  ],
  ['rand', 'float32', 1099511627783, 1, [0.5349225401878357], '1c24f22f320fbf7e824bbbc161da18c5'],
  ['rand', 'float32', 1099511627783, 7, [
    0.5349225401878357,
    0.19880318641662598,
    0.6592116951942444,
    0.6568902730941772,
  ], '8e2a74b853dc0da1c74f397ebc389364'],
  ['rand', 'float32', 1099511627783, 16, [
    0.5349225401878357,
    0.19880318641662598,
    0.6592116951942444,
    0.6568902730941772,
  ], '73686c63af2be7bbff1919b0808255b1'],
  ['rand', 'float32', 1099511627783, 17, [
    0.5349225401878357,
    0.19880318641662598,
    0.6592116951942444,
    0.6568902730941772,
  ], 'adeafe94c9a8843499ed664446f1e6fb'],
  ['rand', 'float32', 1099511627783, 100, [
    0.5349225401878357,
    0.19880318641662598,
    0.6592116951942444,
    0.6568902730941772,
  ], 'f5cc916b9bdcd618ff580a7c968ef0d2'],
  ['rand', 'float64', 0, 1, [0.9700530018065531], '32ed8101c37f031213d10d34535de437'],
  [
    'rand',
    'float64',
    0,
    7,
    [0.9700530018065531, 0.707819864399788, 0.45938294312745087, 0.9207476841219603],
    '87593e9397d979fed1aff26b87594087',
  ],
  [
    'rand',
    'float64',
    0,
    16,
    [0.9700530018065531, 0.707819864399788, 0.45938294312745087, 0.9207476841219603],
    '187c4cd390c99dde9ec04be489590bfd',
  ],
  [
    'rand',
    'float64',
    0,
    17,
    [0.9700530018065531, 0.707819864399788, 0.45938294312745087, 0.9207476841219603],
    '9b3a800650064867cb438a9923155d9b',
  ],
  [
    'rand',
    'float64',
    0,
    100,
    [0.9700530018065531, 0.707819864399788, 0.45938294312745087, 0.9207476841219603],
    '954d361992ce4a99bfbf02789fbadc86',
  ],
  ['rand', 'float64', 1099511627783, 1, [0.279380429906404], 'd3e3692b89140336318b87c375cb71d8'],
  ['rand', 'float64', 1099511627783, 7, [
    0.279380429906404,
    0.27369371365176565,
    0.8620929614176255,
    0.6566884305882014,
  ], '5a5dc45478d8ec0acba0031415a23fce'],
  ['rand', 'float64', 1099511627783, 16, [
    0.279380429906404,
    0.27369371365176565,
    0.8620929614176255,
    0.6566884305882014,
  ], '55e12d49767a844c2e5d97a62fb02e29'],
  ['rand', 'float64', 1099511627783, 17, [
    0.279380429906404,
    0.27369371365176565,
    0.8620929614176255,
    0.6566884305882014,
  ], '1585f617dd48acd81ecc23e6a111af93'],
  ['rand', 'float64', 1099511627783, 100, [
    0.279380429906404,
    0.27369371365176565,
    0.8620929614176255,
    0.6566884305882014,
  ], '244544e3c570daae90734a54fe19392a'],
  ['rand', 'float16', 0, 7, [0.333984375, 0.27294921875, 0.80712890625, 0.59375], '3d40c44be667273a1658eddce3952b75'],
  ['rand', 'float16', 0, 17, [0.333984375, 0.27294921875, 0.80712890625, 0.59375], '5a408d0f60e0ef5d2a7e69a1ce9d1b8c'],
  ['rand', 'float16', 0, 100, [0.333984375, 0.27294921875, 0.80712890625, 0.59375], '6d34a6acd80dc1361791f5312ca7326c'],
  ['rand', 'bfloat16', 0, 7, [0.671875, 0.18359375, 0.45703125, 0.75], '3b4f830720df2464adceca025b531946'],
  ['rand', 'bfloat16', 0, 17, [0.671875, 0.18359375, 0.45703125, 0.75], 'af922300bfd3c60f25e02e2277de5fed'],
  ['rand', 'bfloat16', 0, 100, [0.671875, 0.18359375, 0.45703125, 0.75], '250e6ef907d94849820fb8058cfa6873'],
  ['randn', 'float32', 0, 1, [1.5409960746765137], 'c404e7db1fd6338faad0ee1cf4ddb8dd'],
  [
    'randn',
    'float32',
    0,
    7,
    [1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991],
    'd0ebb62c4e355367bc1f3baad817c1f2',
  ],
  [
    'randn',
    'float32',
    0,
    16,
    [-1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383],
    'ffdd55e8206250908464e9591dfd866d',
  ],
  [
    'randn',
    'float32',
    0,
    17,
    [-1.1258398294448853, -1.6959311962127686, 0.5666506290435791, 0.7935083508491516],
    '6b34408a72fa16073c0fd91fac2623c6',
  ],
  [
    'randn',
    'float32',
    0,
    100,
    [-1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383],
    'dd4205a955dee82008de14c506947051',
  ],
  ['randn', 'float32', 1099511627783, 1, [-0.1467950940132141], 'ca464bb7c4261a7517b4a5dcc51f8115'],
  ['randn', 'float32', 1099511627783, 7, [
    -0.1467950940132141,
    0.7861412763595581,
    0.9468216300010681,
    -1.1143440008163452,
  ], 'c8c83147fd816f47eb0064923e272baf'],
  ['randn', 'float32', 1099511627783, 16, [
    -0.8201345205307007,
    0.39563116431236267,
    0.8989084959030151,
    -1.3884038925170898,
  ], '2b676cc42f9fcffcb09f69976853f54d'],
  ['randn', 'float32', 1099511627783, 17, [
    -0.8201345205307007,
    -0.32456663250923157,
    1.9263681173324585,
    -0.3300117254257202,
  ], '6fe06748d35c564790572eb8c2515056'],
  ['randn', 'float32', 1099511627783, 100, [
    -0.8201345205307007,
    0.39563116431236267,
    0.8989084959030151,
    -1.3884038925170898,
  ], 'f42b10da774f5e889758deba3351c08d'],
  ['randn', 'float64', 0, 1, [1.5409961082440433], 'c9831c305028474db6b1d8ae726fc624'],
  [
    'randn',
    'float64',
    0,
    7,
    [1.5409961082440433, -0.2934289057609464, -2.1787893820745574, 0.5684312772806678],
    'cd6c7fe4763b90ad0e6de3a0a860daea',
  ],
  [
    'randn',
    'float64',
    0,
    16,
    [-2.310411800234176, -0.3732508612577643, -1.0608166785462863, 0.9995093547811761],
    'a73a3683b47759c40cf1384e98feacc9',
  ],
  [
    'randn',
    'float64',
    0,
    17,
    [-2.310411800234176, -0.6332746088675096, -1.2609246557194385, -0.726951062065411],
    'cbe42f029e3004a69e943d7db1783f63',
  ],
  [
    'randn',
    'float64',
    0,
    100,
    [-2.310411800234176, -0.3732508612577643, -1.0608166785462863, 0.9995093547811761],
    '364779de1721578c051f7a2fae234b7b',
  ],
  ['randn', 'float64', 1099511627783, 1, [-0.1467950974849952], 'f9223b9108a333f1248e724cc5898e82'],
  ['randn', 'float64', 1099511627783, 7, [
    -0.1467950974849952,
    0.7861412987235358,
    0.9468216090039564,
    -1.1143440212610307,
  ], '9323453dd8124251ba234174df441e63'],
  ['randn', 'float64', 1099511627783, 16, [
    0.06626753966449943,
    0.04699155524392409,
    1.8365386300294015,
    1.367690398536778,
  ], '0fa88385f92d992704ea582d3d7fcc95'],
  ['randn', 'float64', 1099511627783, 17, [
    0.06626753966449943,
    -0.29104147095938915,
    0.45801695358702993,
    1.6932749764073567,
  ], 'af39fc757a3cd8589e4a8dddea011b80'],
  ['randn', 'float64', 1099511627783, 100, [
    0.06626753966449943,
    0.04699155524392409,
    1.8365386300294015,
    1.367690398536778,
  ], 'b7bc3c60513f2780ac7b700ecead84a8'],
  [
    'randn',
    'float16',
    0,
    7,
    [1.541015625, -0.29345703125, -2.1796875, 0.568359375],
    '315691d390d70533e8371f6640c15cff',
  ],
  [
    'randn',
    'float16',
    0,
    17,
    [-0.90087890625, -1.3212890625, 0.280029296875, -0.07037353515625],
    '89e5c1cf9474b382c55d553090369c96',
  ],
  [
    'randn',
    'float16',
    0,
    100,
    [-0.90087890625, 0.481201171875, 1.1982421875, 0.9052734375],
    '3053b16745a80d081fce89f01d6b8e4b',
  ],
  ['randn', 'bfloat16', 0, 7, [1.5390625, -0.29296875, -2.171875, 0.5703125], '306660ac86c88a28996b5fbffede0dd7'],
  ['randn', 'bfloat16', 0, 17, [1.4609375, -0.5078125, -0.435546875, 1.3671875], '09b9eed6daec81d0ff4e80de05ff8fa6'],
  ['randn', 'bfloat16', 0, 100, [1.4609375, 0.291015625, 0.9609375, 1.5703125], '67a34d8a57ec589a279ced83a41325c4'],
  ['uniform', 'float32', 0, 1, [0.3534753918647766], '16989ccd323d02f1d748cb225b6832e5'],
  [
    'uniform',
    'float32',
    0,
    7,
    [0.3534753918647766, 1.917275309562683, -1.9912548065185547, -1.7408246994018555],
    '3ec9e3d620b8707b613e62e681d5cc3a',
  ],
  [
    'uniform',
    'float32',
    0,
    16,
    [0.3534753918647766, 1.917275309562683, -1.9912548065185547, -1.7408246994018555],
    '10c771f0c9fd1a9a049553845df6f8df',
  ],
  [
    'uniform',
    'float32',
    0,
    17,
    [0.3534753918647766, 1.917275309562683, -1.9912548065185547, -1.7408246994018555],
    '1437b82aa1ef1c26898c6007543e82b9',
  ],
  [
    'uniform',
    'float32',
    0,
    100,
    [0.3534753918647766, 1.917275309562683, -1.9912548065185547, -1.7408246994018555],
    '6542fb1db6d1f77697764a104b089768',
  ],
  ['uniform', 'float32', 1099511627783, 1, [0.575804591178894], '98caccb959b2c6245859e0264fdbb539'],
  ['uniform', 'float32', 1099511627783, 7, [
    0.575804591178894,
    -1.3568816184997559,
    1.2904672622680664,
    1.2771190404891968,
  ], 'a0f41d2abb3bf56c5dacd53a7ef8040e'],
  ['uniform', 'float32', 1099511627783, 16, [
    0.575804591178894,
    -1.3568816184997559,
    1.2904672622680664,
    1.2771190404891968,
  ], '59c447f3736ae62190ad4a2bd266dc03'],
  ['uniform', 'float32', 1099511627783, 17, [
    0.575804591178894,
    -1.3568816184997559,
    1.2904672622680664,
    1.2771190404891968,
  ], '98f9037df543261f118ad2a542c51acc'],
  ['uniform', 'float32', 1099511627783, 100, [
    0.575804591178894,
    -1.3568816184997559,
    1.2904672622680664,
    1.2771190404891968,
  ], '4189c25764b09020256eb04578eda150'],
  ['uniform', 'float64', 0, 1, [3.0778047603876804], '050cb4d97cb9a392aa591fed985f2866'],
  [
    'uniform',
    'float64',
    0,
    7,
    [3.0778047603876804, 1.5699642202987807, 0.1414519229828425, 2.7942991837012716],
    '2b09c524aed71979aacfbadfe581243c',
  ],
  [
    'uniform',
    'float64',
    0,
    16,
    [3.0778047603876804, 1.5699642202987807, 0.1414519229828425, 2.7942991837012716],
    '546caa1f1f488a649fb0c0914cdf3dfc',
  ],
  [
    'uniform',
    'float64',
    0,
    17,
    [3.0778047603876804, 1.5699642202987807, 0.1414519229828425, 2.7942991837012716],
    'c865408be6918d9b3d8022c577a428f0',
  ],
  [
    'uniform',
    'float64',
    0,
    100,
    [3.0778047603876804, 1.5699642202987807, 0.1414519229828425, 2.7942991837012716],
    '68e8d6dca69a8a6fdd7b97531748fe7c',
  ],
  ['uniform', 'float64', 1099511627783, 1, [-0.893562528038177], '698563295367a7a9d65287239037bfe2'],
  ['uniform', 'float64', 1099511627783, 7, [
    -0.893562528038177,
    -0.9262611465023476,
    2.4570345281513464,
    1.2759584758821578,
  ], '058f23c4e269755d94272bf0405ff096'],
  ['uniform', 'float64', 1099511627783, 16, [
    -0.893562528038177,
    -0.9262611465023476,
    2.4570345281513464,
    1.2759584758821578,
  ], '21e50cc8bc88e03ccbd8235ae4c4a1b2'],
  ['uniform', 'float64', 1099511627783, 17, [
    -0.893562528038177,
    -0.9262611465023476,
    2.4570345281513464,
    1.2759584758821578,
  ], 'cd9cacbf1077d642ad840e189bfc7755'],
  ['uniform', 'float64', 1099511627783, 100, [
    -0.893562528038177,
    -0.9262611465023476,
    2.4570345281513464,
    1.2759584758821578,
  ], '5a15343871f2d3cd0d484d6885d2bf62'],
  [
    'uniform',
    'float16',
    0,
    7,
    [-0.57958984375, -0.9306640625, 2.140625, 0.9140625],
    'ffd485621648b4c38429f9af8f7bc02e',
  ],
  [
    'uniform',
    'float16',
    0,
    17,
    [-0.57958984375, -0.9306640625, 2.140625, 0.9140625],
    '812fb706c9445ab44920f29fce1c8087',
  ],
  [
    'uniform',
    'float16',
    0,
    100,
    [-0.57958984375, -0.9306640625, 2.140625, 0.9140625],
    '14d17711cc6ec336775a9f465f45cf88',
  ],
  ['uniform', 'bfloat16', 0, 7, [1.359375, -1.4453125, 0.1279296875, 1.8125], '8be558a5fca64e61da8d5d68d4be1044'],
  ['uniform', 'bfloat16', 0, 17, [1.359375, -1.4453125, 0.1279296875, 1.8125], '1a0ff75fab59764899e0c58003b1a1c3'],
  ['uniform', 'bfloat16', 0, 100, [1.359375, -1.4453125, 0.1279296875, 1.8125], '3fcb59f3df52ea3fd1cc296794ae2158'],
  ['normal', 'float32', 0, 1, [2.655747175216675], '039009bd3b811214cfb184b18c64b6c9'],
  [
    'normal',
    'float32',
    0,
    7,
    [2.655747175216675, 1.2799283266067505, -0.1340920329093933, 1.926323413848877],
    '58de9059f7986d0bbab5dae7c6947c68',
  ],
  [
    'normal',
    'float32',
    0,
    16,
    [0.6556200981140137, 0.6357298493385315, 1.3120660781860352, 1.1745909452438354],
    'a8093497849f1b493bcb3852f965ebb8',
  ],
  [
    'normal',
    'float32',
    0,
    17,
    [0.6556200981140137, 0.22805160284042358, 1.924988031387329, 2.0951311588287354],
    'ef88c083850eaff2c3f81d0ad2fc298f',
  ],
  [
    'normal',
    'float32',
    0,
    100,
    [0.6556200981140137, 0.6357298493385315, 1.3120660781860352, 1.1745909452438354],
    '3a5d394e4bdf4b6df485021851c365b9',
  ],
  ['normal', 'float32', 1099511627783, 1, [1.3899036645889282], 'c0dc2a4bb8f6730a1d673a0cb2a3dd3f'],
  ['normal', 'float32', 1099511627783, 7, [
    1.3899036645889282,
    2.0896060466766357,
    2.210116147994995,
    0.6642419695854187,
  ], 'cf119ea4ea6882ac39cf2186d1fa6b6a'],
  ['normal', 'float32', 1099511627783, 16, [
    0.8848991394042969,
    1.7967233657836914,
    2.1741814613342285,
    0.4586970806121826,
  ], '2b0d670b58092235f90c9ea8909dc05c'],
  ['normal', 'float32', 1099511627783, 17, [
    0.8848991394042969,
    1.2565749883651733,
    2.9447760581970215,
    1.2524912357330322,
  ], '4651ff42fce9008d88bdffd689898a1e'],
  ['normal', 'float32', 1099511627783, 100, [
    0.8848991394042969,
    1.7967233657836914,
    2.1741814613342285,
    0.4586970806121826,
  ], 'b58245cdeb0b89daa4c3a730625068e2'],
  ['normal', 'float64', 0, 1, [2.6557470811830326], '379a805cffbb9aca6a2fc46b427de167'],
  [
    'normal',
    'float64',
    0,
    7,
    [2.6557470811830326, 1.2799283206792902, -0.13409203655591806, 1.9263234579605009],
    '1f06477b831a74b6ac1e6200a16f9a90',
  ],
  [
    'normal',
    'float64',
    0,
    16,
    [-0.23280885017563202, 1.2200618540566768, 0.7043874910902853, 2.249632016085882],
    'ea8726915df12cd2b13eb792abd78dd1',
  ],
  [
    'normal',
    'float64',
    0,
    17,
    [-0.23280885017563202, 1.0250440433493677, 0.5543065082104212, 0.9547867034509417],
    '99fe8f1442116f00ca025dd3a321f154',
  ],
  [
    'normal',
    'float64',
    0,
    100,
    [-0.23280885017563202, 1.2200618540566768, 0.7043874910902853, 2.249632016085882],
    '6da0344dd3619b306a3051149b5c464b',
  ],
  ['normal', 'float64', 1099511627783, 1, [1.3899036768862536], '78b0a060a6d069cbb5af4919c3fb4416'],
  ['normal', 'float64', 1099511627783, 7, [
    1.3899036768862536,
    2.089605974042652,
    2.2101162067529674,
    0.664241984054227,
  ], '4dcf7a1aec6e32429952bc33f20b1971'],
  ['normal', 'float64', 1099511627783, 16, [
    1.5497006547483745,
    1.535243666432943,
    2.877403972522051,
    2.5257677989025837,
  ], '0315829b7e2a62cc18d00f9a94609f8e'],
  ['normal', 'float64', 1099511627783, 17, [
    1.5497006547483745,
    1.281718896780458,
    1.8435127151902724,
    2.7699562323055176,
  ], '574d54479566583fcf3f6e5c2e3b0eb3'],
  ['normal', 'float64', 1099511627783, 100, [
    1.5497006547483745,
    1.535243666432943,
    2.877403972522051,
    2.5257677989025837,
  ], '53999951ed9d545e838e3d14b9374e46'],
  [
    'normal',
    'float16',
    0,
    7,
    [2.65625, 1.2802734375, -0.134033203125, 1.9267578125],
    'a4c71c4d9ff2e44761bd97133f9a7ae3',
  ],
  [
    'normal',
    'float16',
    0,
    17,
    [0.82421875, 0.5087890625, 1.7099609375, 1.447265625],
    '401ac29b7232f66fefd8217133ef0858',
  ],
  ['normal', 'float16', 0, 100, [0.82421875, 1.861328125, 2.3984375, 2.1796875], '4052b39e9f8b451d720d4ada3b0d197e'],
  ['normal', 'bfloat16', 0, 7, [2.65625, 1.28125, -0.1337890625, 1.9296875], '726340db61cabc20a3ac75b2b1e97bad'],
  ['normal', 'bfloat16', 0, 17, [2.59375, 1.1171875, 1.171875, 2.53125], 'a93a069f7dc24119a78a6ba9a2666559'],
  ['normal', 'bfloat16', 0, 100, [2.59375, 1.71875, 2.21875, 2.6875], '6aec62a43eb1276c38da5510bde5f8ce'],
];

function sample(kind: string, dtype: FloatName, n: number): Tensor {
  switch (kind) {
    case 'rand':
      return rand([n], { dtype });
    case 'randn':
      return randn([n], { dtype });
    case 'uniform':
      return empty([n], { dtype }).uniform_(-2.5, 3.25);
    default:
      return empty([n], { dtype }).normal_(1.5, 0.75);
  }
}

describe('Generator', () => {
  it("has torch.get_rng_state()'s bytes after seeding and after drawing", () => {
    const g = new Generator(7);
    assert.equal(g.getState().length, RNG_STATE_BYTES);
    const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
    assert.equal(sha(g.getState()), 'daf9268b18e87b0267a6ad240c6093eb98fe6f03872986bd31a497ba5ea2371a');
    for (let i = 0; i < 700; i++) g.random(); // crosses a state regeneration (624 words)
    assert.equal(sha(g.getState()), '2a282347f58425ac15ab04401ae76159f7f862b1711dafa25eeb69ed78a1ee9a');
  });

  it('keeps the seed, left and next counters where PyTorch keeps them', () => {
    const g = new Generator(42);
    const view = (b: Uint8Array) => new DataView(b.buffer);
    let s = view(g.getState());
    assert.deepEqual([s.getBigUint64(0, true), s.getInt32(8, true), s.getBigUint64(16, true)], [42n, 1, 0n]);
    assert.deepEqual([s.getUint32(24, true), s.getUint32(32, true)], [42, 3107752595]);
    rand([5], { generator: g });
    s = view(g.getState());
    assert.deepEqual([s.getInt32(8, true), s.getBigUint64(16, true), s.getUint32(24, true)], [620, 5n, 723970371]);
    // torch.empty(1, dtype=torch.int64).random_(0, 2**31, generator=g) at this point gives 1201263687, the
    // next draw modulo 2^31; torch.randint(0, 2**32, (1,)) gives 2571218620, the draw after it (the low word).
    assert.equal(g.random() % 2 ** 31, 1201263687);
    assert.equal(g.random(), 2571218620);
  });

  it('stores the cached normal sample in the state and restores it', () => {
    const g = new Generator(42);
    rand([5], { generator: g }).dispose();
    randn([3], { generator: g, dtype: 'float64' }).dispose(); // 2 pairs drawn, one sample cached
    const state = g.getState();
    const view = new DataView(state.buffer);
    assert.equal(view.getInt32(8 + 8 + 8 + 8 * 624 + 24, true), 1); // normal_is_valid
    assert.equal(view.getFloat64(24 + 8 * 624 + 8, true), 0.6646648828337016); // normal_y, as PyTorch's
    const next = randn([1], { generator: g, dtype: 'float64' });
    assert.deepEqual(values(next), [0.6646648828337016]);
    const h = new Generator().setState(state);
    assert.deepEqual(values(randn([1], { generator: h, dtype: 'float64' })), [0.6646648828337016]);
    assert.deepEqual(values(rand([3], { generator: h })), values(rand([3], { generator: g })));
  });

  it('rejects states of the wrong size or with invalid counters', () => {
    const g = new Generator();
    assert.throws(
      () => g.setState(new Uint8Array(10)),
      /^Error: Expected either a CPUGeneratorImplStateLegacy of size 5048 or a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 10$/,
    );
    const bad = g.getState();
    new DataView(bad.buffer).setInt32(8, 0, true); // left = 0
    assert.throws(() => g.setState(bad), /Invalid mt19937 state/);
    const legacy = g.getState().slice(0, 5048);
    assert.equal(g.clone().setState(legacy).random(), g.random());
  });

  it('clones: both copies continue with the same stream', () => {
    const g = new Generator(123);
    g.random();
    const c = g.clone();
    for (let i = 0; i < 1000; i++) assert.equal(c.random(), g.random());
  });

  it("starts from PyTorch's default seed and seeds like torch.manual_seed", () => {
    const g = new Generator();
    assert.equal(g.initialSeed(), 67280421310721n);
    assert.deepEqual(values(rand([2], { generator: g })), [0.267295241355896, 0.8725283145904541]);
    // Negative seeds wrap to their two's complement, numbers are truncated, 2^64 overflows.
    assert.equal(new Generator(-1).initialSeed(), 18446744073709551615n);
    assert.equal(new Generator(2n ** 64n - 1n).random(), new Generator(-1).random());
    assert.equal(new Generator(1.9).initialSeed(), 1n);
    assert.throws(() => new Generator(2n ** 64n), /^RangeError: Overflow when unpacking long$/);
    assert.throws(() => new Generator(-(2n ** 63n) - 1n), RangeError);
    assert.throws(() => new Generator(NaN), TypeError);
  });

  it('seed() picks a non-deterministic seed and reports it', () => {
    const g = new Generator();
    const a = g.seed(), b = g.seed();
    assert.notEqual(a, b);
    assert.equal(g.initialSeed(), b);
    assert.equal(new Generator(b).random(), g.random());
  });

  it('manualSeed / initialSeed / getRngState / setRngState drive the default generator', () => {
    manualSeed(5);
    assert.equal(initialSeed(), 5n);
    const saved = getRngState();
    const first = values(rand([4]));
    setRngState(saved);
    assert.deepEqual(values(rand([4])), first);
    manualSeed(5);
    assert.deepEqual(values(rand([1])), [0.8302518725395203]);
  });
});

describe('samplers give PyTorch 1.13 CPU values for the same seed', () => {
  for (const [kind, dtype, seed, n, head, hash] of SAMPLES) {
    it(`${kind} ${dtype} seed ${seed} n ${n}`, () => {
      manualSeed(seed);
      const t = sample(kind, dtype, n);
      assert.equal(t.dtype.name, dtype);
      assertPyTorchValues(t, head, hash, `${kind} ${dtype} ${seed} ${n}`);
      t.dispose();
    });
  }

  it('float64 normals are within an ulp where glibc is not correctly rounded (seed 1, n 17)', () => {
    // PyTorch's normal_fill<double> calls glibc's log/cos/sin; JavaScript's Math functions are correctly
    // rounded on these inputs where glibc is not, so 2 of these 17 samples differ in the last bit.
    const expected = [
      -0.31128955419003207,
      0.3739858166762804,
      0.5739008402091161,
      1.5697184649359581,
      0.8734455849426772,
      -3.704663800207429,
      -1.8141539905872015,
      -1.8425712793844078,
      0.09412786590968454,
      0.5462183247259068,
      1.052307808929565,
      -0.15636439667930063,
      -2.1010054062092243,
      1.5797411191469026,
      1.0833573008638342,
      0.8896745158287568,
      -1.928583354008078,
    ];
    manualSeed(1);
    const got = values(randn([17], { dtype: 'float64' }));
    let exact = 0;
    for (let i = 0; i < 17; i++) {
      if (got[i] === expected[i]) exact++;
      assert.ok(Math.abs(got[i] - expected[i]) <= 2 * Number.EPSILON * Math.abs(expected[i]), `element ${i}`);
    }
    assert.ok(exact >= 15);
  });

  it('randn below 16 elements keeps the second Box-Muller sample for the next call', () => {
    manualSeed(3);
    const a = values(randn([3], { dtype: 'float64' }));
    const b = values(randn([1], { dtype: 'float64' })); // the cached sample: no draw
    const c = values(randn([2]));
    assert.deepEqual(a, [0.8032760780963506, 0.17483339327910355, 0.08897809502587893]);
    assert.deepEqual(b, [-0.6137180077293578]);
    assert.deepEqual(c, [0.04618244990706444, -1.3682591915130615]);
    manualSeed(0);
    assert.deepEqual(values(randn([1], { dtype: 'float64' })), [1.5409961082440433]);
    assert.deepEqual(values(randn([1])), [-0.293428897857666]); // float32 uses the cached double
    manualSeed(0);
    assert.deepEqual(values(randn([1])), [1.5409960746765137]); // reseeding clears the cache
  });

  it('float16 and bfloat16 normals of 20 elements', () => {
    manualSeed(2);
    assert.deepEqual(values(randn([20], { dtype: 'float16' })).slice(0, 6), [
      0.59423828125,
      -0.533203125,
      -0.354248046875,
      0.42138671875,
      -0.317138671875,
      1.7900390625,
    ]);
    manualSeed(2);
    assert.deepEqual(values(randn([20], { dtype: 'bfloat16' })).slice(14), [
      0.3203125,
      1.171875,
      -0.859375,
      0.7265625,
      0.17578125,
      0.1396484375,
    ]);
  });

  it("bit-exact float32 randn over 300k elements matches PyTorch's AVX2 kernel statistics", () => {
    // Not a PyTorch comparison (that is the table above) but a sanity check of the emulated log/sincos.
    manualSeed(11);
    const t = randn([300_001]);
    const xs = values(t);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
    assert.ok(Math.abs(mean) < 0.01 && Math.abs(variance - 1) < 0.01, `mean ${mean} variance ${variance}`);
    t.dispose();
  });
});

describe('uniform_ and normal_', () => {
  it('fill a transposed tensor in memory order, as TensorIterator does', () => {
    manualSeed(0);
    const base = empty([4, 5]);
    const t = restride(base, [5, 4], [1, 5], 0);
    assert.equal(t.uniform_(), t);
    assert.deepEqual(values(t)[0], 0.49625658988952637);
    assert.deepEqual(values(t).slice(0, 4), [
      0.49625658988952637,
      0.6340786814689636,
      0.3488934636116028,
      0.518521785736084,
    ]);
    assert.deepEqual(values(t).slice(16), [
      0.30742281675338745,
      0.6323062777519226,
      0.2938884496688843,
      0.28226858377456665,
    ]);
    t.dispose();
  });

  it('normal_ on a non-contiguous tensor uses the scalar path even for 16+ elements', () => {
    manualSeed(0);
    const base = empty([40]);
    const t = restride(base, [20], [2], 0);
    t.normal_();
    assert.deepEqual(values(t).slice(0, 3), [1.5409960746765137, -0.293428897857666, -2.1787893772125244]);
    assert.deepEqual(values(t).slice(17), [0.3731146454811096, -0.8919953107833862, -1.5091077089309692]);
    t.dispose();
  });

  it('use a given generator and leave the default one alone', () => {
    manualSeed(5);
    const g = new Generator().manualSeed(5);
    assert.deepEqual(values(randint(3, 10, [5], { generator: g })), [4, 8, 5, 6, 9]);
    assert.deepEqual(values(rand([2], { generator: g })), [0.1166452169418335, 0.16439151763916016]);
    assert.deepEqual(values(empty([1]).uniform_(0, 1, { generator: new Generator(5) })), [0.8302518725395203]);
    assert.deepEqual(values(rand([1])), [0.8302518725395203]);
  });

  it('bump the version counter and return self', () => {
    const t = zeros([3]);
    const v = t.version;
    assert.equal(t.normal_(0, 1), t);
    assert.equal(t.uniform_(-1, 1), t);
    assert.equal(t.version, v + 2);
    assert.ok(values(t).every((x) => x >= -1 && x < 1));
    t.dispose();
  });

  it("raise PyTorch's errors", () => {
    const i = zeros([3], { dtype: 'int64' });
    assert.throws(() => i.uniform_(), (e: Error) =>
      e instanceof NotImplementedError &&
      e.message === `"check_uniform_bounds" not implemented for 'Long'`);
    assert.throws(() => i.normal_(), /^NotImplementedError: "normal_kernel_cpu" not implemented for 'Long'$/);
    const f = zeros([3]);
    assert.throws(
      () => f.uniform_(2, 1),
      /^RuntimeError: uniform_ expects to return a \[from, to\) range, but found from=2 > to=1$/,
    );
    assert.throws(() => f.uniform_(0, Infinity), /^RuntimeError: to is out of bounds for float$/);
    assert.throws(() => f.uniform_(NaN, 1), /^RuntimeError: from is out of bounds for float$/);
    assert.throws(
      () => f.uniform_(-3e38, 3e38),
      /^RuntimeError: uniform_ expects to-from <= std::numeric_limits<Float>::max\(\), but found to=3e\+38 and from=-3e\+38 which result in to-from to exceed the limit$/,
    );
    assert.throws(() => zeros([1], { dtype: 'float16' }).uniform_(0, 1e300), /to is out of bounds for c10::Half/);
    assert.throws(() => f.normal_(0, -1), /^RuntimeError: normal expects std >= 0.0, but found std -1$/);
    assert.throws(() => f.normal_(0, NaN), /found std nan$/);
    const expanded = restride(zeros([1]), [3], [0], 0);
    assert.throws(
      () => expanded.uniform_(),
      /more than one element of the written-to tensor refers to a single memory location/,
    );
    assert.throws(() => expanded.normal_(), /more than one element/);
    f.dispose();
    assert.throws(() => f.uniform_(), /uniform_\(\): argument 'self' was disposed/);
    i.dispose();
    expanded.dispose();
  });

  it('accept empty tensors, normal_ with std 0, and meta tensors', () => {
    const e = empty([0, 3]);
    assert.equal(e.uniform_(), e);
    assert.deepEqual(values(zeros([3]).normal_(2, 0)), [2, 2, 2]);
    assert.deepEqual(values(empty([3]).normal_(Infinity, 1)), [Infinity, Infinity, Infinity]);
    const m = empty([2, 3], { device: 'meta' }).uniform_();
    assert.deepEqual([m.device.type, ...m.shape], ['meta', 2, 3]);
    assert.throws(
      () => empty([2], { device: 'meta', dtype: 'int32' }).normal_(),
      /"normal_kernel_cpu" not implemented for 'Int'/,
    );
  });
});

describe('rand, randn, randint factories', () => {
  // [low, high, n, dtype, seed, first values, digest], from torch.randint(low, high, (n,), dtype=dtype).
  const RANDINT: Array<[number, number, number, string, number, number[], string]> = [
    [-5, 1000, 100, 'int64', 0, [999, 334, 768, 490, 113], 'df9cbfa0e03ea2bc66aea5fcc5d2ed44'],
    [0, 10, 17, 'int64', 42, [2, 7, 6, 4, 6], 'e42987771ff5ffd734d2bba228d163f3'],
    [
      -(2 ** 40),
      2 ** 41,
      50,
      'int64',
      3,
      [-643941333352, 1073054410371, -308716543032, -1097066454251, -11007735149],
      'cdf87876968065af64f94c9450842e3d',
    ],
    [-5, 5, 30, 'int32', 1, [0, 4, -1, 3, -2], '422200d94383cb58997c39031d5af919'],
    [0, 2, 20, 'bool', 1, [1, 1, 0, 0, 1], 'eab747d7ff58ea8d1f742c8a7309036a'],
    [-3, 3, 20, 'float16', 1, [-2, 2, -3, -1, -2], '9e5fd663ec3db4036d125dd0d493d295'],
    [
      0,
      2 ** 40,
      20,
      'float64',
      9,
      [542731227484, 543309627893, 781716445240, 1079394964374, 536928129601],
      'e3fc248e2b883a3b60e8a9be4ac5552d',
    ],
    [
      0,
      2 ** 40,
      20,
      'float32',
      9,
      [554137681920, 1095126548480, 227313336320, 127030468608, 693180891136],
      'f9ce0b0701be4c4b13a3326599620cf8',
    ],
    [-100, 100, 33, 'int8', 4, [30, -6, -69, 73, -11], '91e8f08dc02a39defdfc66e8c4d46e66'],
    [0, 256, 33, 'uint8', 4, [122, 174, 183, 197, 129], '6c36a5f9b616bfb488c0e9b1f6d30881'],
    [
      -(2 ** 31),
      2 ** 31,
      20,
      'int32',
      4,
      [2005877882, 1720656046, 202860983, -1405762875, 2030163841],
      '3c90e639282fc9a1d8cd5859bf22cb67',
    ],
  ];
  for (const [low, high, n, dtype, seed, head, hash] of RANDINT) {
    it(`randint(${low}, ${high}, [${n}], ${dtype}) seed ${seed}`, () => {
      manualSeed(seed);
      const t = randint(low, high, [n], { dtype: dtype as 'int64' });
      assert.equal(t.dtype.name, dtype);
      assertPyTorchValues(t, head, hash, 'randint');
      t.dispose();
    });
  }

  it('randint(high, size) draws from [0, high) as int64, with or without a generator', () => {
    manualSeed(0);
    const t = randint(10, [3]);
    assert.deepEqual([t.dtype.name, values(t)], ['int64', [4, 9, 3]]);
    assert.deepEqual(values(randint(10, [3], { generator: new Generator(0) })), [4, 9, 3]);
    assert.deepEqual(randint(5, [2, 0]).shape, [2, 0]);
  });

  it('shapes, dtypes and devices', () => {
    assert.deepEqual(rand([2, 3]).shape, [2, 3]);
    assert.deepEqual(rand(4).shape, [4]);
    assert.equal(rand([1], { dtype: 'float64' }).dtype.name, 'float64');
    assert.deepEqual(randn([0]).shape, [0]);
    const m = randn([2, 5], { device: 'meta', dtype: 'bfloat16' });
    assert.deepEqual([m.device.type, m.dtype.name, ...m.shape], ['meta', 'bfloat16', 2, 5]);
    const r = randint(0, 7, [3], { device: 'meta', dtype: 'int16' });
    assert.deepEqual([r.device.type, r.dtype.name], ['meta', 'int16']);
  });

  it("raise PyTorch's errors on every device", () => {
    for (const device of ['cpu', 'meta'] as const) {
      assert.throws(
        () => rand([3], { dtype: 'int64', device }),
        /^NotImplementedError: "check_uniform_bounds" not implemented for 'Long'$/,
      );
      assert.throws(() => rand([3], { dtype: 'bool', device }), /not implemented for 'Bool'/);
      assert.throws(
        () => randn([3], { dtype: 'int32', device }),
        /^NotImplementedError: "normal_kernel_cpu" not implemented for 'Int'$/,
      );
      assert.throws(
        () => randint(5, 5, [3], { device }),
        /^RuntimeError: random_ expects 'from' to be less than 'to', but got from=5 >= to=5$/,
      );
      assert.throws(() => randint(5, 2, [3], { device }), /but got from=5 >= to=2$/);
      assert.throws(
        () => randint(0, 300, [3], { dtype: 'uint8', device }),
        /^RuntimeError: to - 1 is out of bounds for unsigned char$/,
      );
      assert.throws(
        () => randint(-1, 3, [3], { dtype: 'uint8', device }),
        /^RuntimeError: from is out of bounds for unsigned char$/,
      );
      assert.throws(() => randint(0, 3, [3], { dtype: 'bool', device }), /to - 1 is out of bounds for bool/);
      assert.throws(
        () => randint(-(2 ** 62), 5, [1], { dtype: 'int16', device }),
        /from is out of bounds for short int/,
      );
      assert.throws(
        () => randint(-(2 ** 62), 5, [1], { dtype: 'float16', device }),
        /from is out of bounds for c10::Half/,
      );
      assert.throws(() => rand([-1], { device }), /Trying to create tensor with negative dimension -1: \[-1\]/);
    }
  });

  it('rand of a million float32 values stays fast', () => {
    rand([1000]).dispose(); // warm up
    const start = performance.now();
    const t = rand([1_000_000]);
    const elapsed = performance.now() - start;
    t.dispose();
    // Typically ~10 ms; the bound only catches order-of-magnitude regressions on a loaded machine.
    assert.ok(elapsed < 1000, `${elapsed} ms`);
  });
});

describe('rand_like, randn_like, randint_like', () => {
  it('keep the dim order of a transposed input and draw in memory order', () => {
    const x = restride(empty([3, 6]), [6, 3], [1, 6], 0);
    manualSeed(0);
    const y = randnLike(x); // non-contiguous: the scalar normal path
    assert.deepEqual([...y.stride()], [1, 6]);
    assert.deepEqual(values(y).slice(0, 3), [1.5409960746765137, 0.40334683656692505, -0.8566746115684509]);
    manualSeed(0);
    const z = randLike(x, { dtype: 'float64' });
    assert.deepEqual(values(z).slice(0, 3), [0.9700530018065531, 0.17860617520075095, 0.35526675833930643]);
    manualSeed(0);
    const i = restride(empty([2, 3], { dtype: 'int32' }), [3, 2], [1, 3], 0);
    const r = randintLike(i, 5, 9);
    assert.deepEqual([r.dtype.name, [...r.stride()], values(r)], ['int32', [1, 3], [5, 5, 8, 8, 6, 8]]);
    for (const t of [x, y, z, i, r]) t.dispose();
  });

  it('take dtype and device from self unless given', () => {
    const x = zeros([2, 2], { dtype: 'float64' });
    assert.equal(randLike(x).dtype.name, 'float64');
    assert.equal(randintLike(x, 4, { dtype: 'int8' }).dtype.name, 'int8');
    assert.ok(values(randintLike(x, 4)).every((v) => Number.isInteger(v) && v >= 0 && v < 4));
    const m = randnLike(x, { device: 'meta' });
    assert.deepEqual([m.device.type, m.dtype.name], ['meta', 'float64']);
    assert.throws(() => randLike(zeros([2], { dtype: 'int64' })), /"check_uniform_bounds" not implemented for 'Long'/);
  });

  it('free everything they allocate, also when they throw', () => {
    const before = memoryStats();
    const x = zeros([4, 4]);
    randLike(x).dispose();
    randnLike(x).dispose();
    randintLike(x, 2, 7).dispose();
    assert.throws(() => randLike(zeros([2], { dtype: 'int64' })));
    x.dispose();
    const after = memoryStats();
    assert.equal(after.liveTensors, before.liveTensors + 1); // the int64 zeros made inside assert.throws
  });
});
