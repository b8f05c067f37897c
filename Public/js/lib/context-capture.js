// Context with answers, measured on this device: the position (with its accuracy and time) and the background
// noise level as dBFS over a few seconds. The microphone's samples are reduced to one number here and dropped;
// no sound is kept or sent.

/** Seconds of sound the noise level is the mean of. */
export const noiseSeconds = 3;

/** The level of a mean square amplitude (full scale = 1) in dBFS, within the server's range of -200…0. */
export function dbfs(meanSquare) {
  if (!(meanSquare > 0)) return -200;
  const level = 10 * Math.log10(meanSquare);
  return Math.round(Math.min(0, Math.max(-200, level)) * 10) / 10;
}

/** The mean square of every sample in the blocks given, or 0 without samples. */
export function meanSquare(blocks) {
  let sum = 0;
  let count = 0;
  for (const block of blocks) {
    for (const sample of block) sum += sample * sample;
    count += block.length;
  }
  return count ? sum / count : 0;
}

/** The device's position, or null when it cannot or may not be known. */
export function capturePosition({ timeoutMs = 15000 } = {}) {
  if (!navigator.geolocation) return Promise.resolve(null);
  return new Promise((resolve) => {
    navigator.geolocation.getCurrentPosition(
      (position) =>
        resolve({
          latitude: position.coords.latitude,
          longitude: position.coords.longitude,
          accuracyM: Math.min(100000, Math.max(0, position.coords.accuracy)),
          capturedAt: new Date(position.timestamp || Date.now()).toISOString(),
        }),
      () => resolve(null),
      { enableHighAccuracy: false, maximumAge: 60000, timeout: timeoutMs },
    );
  });
}

/**
 * The background noise level over `seconds`: the microphone's samples are read block by block into a running
 * mean square, and the microphone is released as soon as the time is up. Null when there is no microphone or
 * the person does not allow it.
 */
export async function measureNoise(seconds = noiseSeconds) {
  if (!navigator.mediaDevices?.getUserMedia || !window.AudioContext) return null;
  let stream;
  let audio;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
    audio = new AudioContext();
    await audio.resume();
    const analyser = audio.createAnalyser();
    analyser.fftSize = 2048;
    audio.createMediaStreamSource(stream).connect(analyser);
    const block = new Float32Array(analyser.fftSize);
    const blockMs = (analyser.fftSize / audio.sampleRate) * 1000;
    const started = performance.now();
    let sum = 0;
    let count = 0;
    while (performance.now() - started < seconds * 1000) {
      await new Promise((resolve) => setTimeout(resolve, blockMs));
      analyser.getFloatTimeDomainData(block);
      sum += meanSquare([block]) * block.length;
      count += block.length;
    }
    return {
      dbfs: dbfs(count ? sum / count : 0),
      durationS: Math.round(((performance.now() - started) / 1000) * 10) / 10,
      capturedAt: new Date().toISOString(),
    };
  } catch {
    return null;
  } finally {
    stream?.getTracks().forEach((track) => track.stop());
    await audio?.close().catch(() => {});
  }
}
