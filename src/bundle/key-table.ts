/**
 * Distinct keys by their UTF-8 bytes, numbered from 0 in the order first seen. A million index rows look their
 * key up where it lies in the read buffer: no string per row, and no Map hashing a fresh string each time
 * (together about two thirds of reducing the rows to their latest). Open addressing over one Int32Array of
 * [number, hash] pairs, the key bytes packed in one Buffer.
 */
export class KeyTable {
  /** Keys held so far: the next new key gets this number. */
  size = 0;
  private slots = new Int32Array(2048).fill(-1);
  private mask = 1023;
  private bytes = Buffer.alloc(64 * 1024);
  private used = 0;
  private starts: number[] = [];
  private lengths: number[] = [];

  /** The number of the key in `buf` from `from` to `to`, numbering it when it is new. */
  idOf(buf: Buffer, from: number, to: number): number {
    let hash = 0x811c9dc5 | 0; // FNV-1a, as the int32 the slots hold
    for (let i = from; i < to; i++) hash = Math.imul(hash ^ (buf[i] as number), 0x01000193);
    const length = to - from;
    let slot = hash & this.mask;
    for (let id = this.slots[slot * 2] as number; id !== -1; id = this.slots[slot * 2] as number) {
      if (this.slots[slot * 2 + 1] === hash && this.lengths[id] === length && this.holds(id, buf, from, length)) {
        return id;
      }
      slot = (slot + 1) & this.mask;
    }
    return this.add(buf, from, length, slot, hash);
  }

  /** idOf for a key already a string (a row the reader had to parse). */
  idOfText(key: string): number {
    const buf = Buffer.from(key);
    return this.idOf(buf, 0, buf.length);
  }

  keyOf(id: number): string {
    const start = this.starts[id] as number;
    return this.bytes.toString('utf8', start, start + (this.lengths[id] as number));
  }

  // A byte loop: keys are short, and Buffer.compare's native call costs more than the bytes it compares.
  private holds(id: number, buf: Buffer, from: number, length: number): boolean {
    const start = this.starts[id] as number;
    for (let i = 0; i < length; i++) if (this.bytes[start + i] !== buf[from + i]) return false;
    return true;
  }

  private add(buf: Buffer, from: number, length: number, slot: number, hash: number): number {
    if (this.used + length > this.bytes.length) {
      const bigger = Buffer.alloc(Math.max(this.bytes.length * 2, this.used + length));
      this.bytes.copy(bigger, 0, 0, this.used);
      this.bytes = bigger;
    }
    buf.copy(this.bytes, this.used, from, from + length);
    const id = this.size++;
    this.starts.push(this.used);
    this.lengths.push(length);
    this.used += length;
    this.slots[slot * 2] = id;
    this.slots[slot * 2 + 1] = hash;
    // At most half full, so a probe ends soon at an empty slot.
    if (this.size * 2 > this.mask + 1) this.rehash();
    return id;
  }

  private rehash(): void {
    const old = this.slots;
    this.mask = this.mask * 2 + 1;
    this.slots = new Int32Array((this.mask + 1) * 2).fill(-1);
    for (let s = 0; s < old.length; s += 2) {
      const id = old[s] as number;
      if (id === -1) continue;
      const hash = old[s + 1] as number;
      let slot = hash & this.mask;
      while (this.slots[slot * 2] !== -1) slot = (slot + 1) & this.mask;
      this.slots[slot * 2] = id;
      this.slots[slot * 2 + 1] = hash;
    }
  }
}
