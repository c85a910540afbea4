// The parts of three.js the shared-flip page (tumble export --out flip.html) uses, bundled by
// esbuild into three-viewer.min.js as one classic script that sets window.TUMBLE_THREE.
// Rebuild with resources/viewer/build.sh (see the README's "Share the flip").
import {
  AmbientLight, AnimationMixer, BufferAttribute, BufferGeometry, Color, DirectionalLight, GridHelper,
  HemisphereLight, Line, LineBasicMaterial, LoopRepeat, Matrix4, PerspectiveCamera, Quaternion, REVISION,
  Scene, SRGBColorSpace, Vector3, WebGLRenderer,
} from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';

window.TUMBLE_THREE = {
  AmbientLight, AnimationMixer, BufferAttribute, BufferGeometry, Color, DirectionalLight, GridHelper,
  HemisphereLight, Line, LineBasicMaterial, LoopRepeat, Matrix4, PerspectiveCamera, Quaternion, REVISION,
  Scene, SRGBColorSpace, Vector3, WebGLRenderer, GLTFLoader, OrbitControls,
};
