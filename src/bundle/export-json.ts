import { type Exporter, type ExportPart, SpooledExport } from './exporters.js';
import type { IndexRow } from './row.js';
import { SummaryTally } from './summary.js';

class JsonExport extends SpooledExport {
  private readonly summary = new SummaryTally();
  private readonly rows = this.spool();
  private first = true;

  visit(row: IndexRow): void {
    this.summary.visit(row);
    this.rows.write(`${this.first ? '' : ','}\n${JSON.stringify(row)}`);
    this.first = false;
  }

  *document(): Generator<ExportPart> {
    this.warnSkipped();
    const { runId } = this.source;
    const summary = this.summary.summary(runId, this.index);
    yield `{"schema":"proctor.export/1","run_id":${JSON.stringify(runId)},"summary":${JSON.stringify(summary)},"cases":[`;
    yield this.rows;
    yield '\n]}\n';
  }
}

/** One JSON document: the run's summary and the latest row of every case, the cases spooled as they stream. */
export const exportJson: Exporter = (source) => new JsonExport(source);
