/** Delegated tasks' progress: one block per task, one row per subtask with its status. */
import { SubtaskItem, TaskView } from '../protocol';
import { h } from './dom';

export class TaskList {
  readonly node = h('div', { className: 'loom-Tasks', loom: 'tasks' });

  show(tasks: Iterable<TaskView>): void {
    const blocks = [...tasks].map(task => Private.task(task));
    this.node.hidden = blocks.length === 0;
    this.node.replaceChildren(...blocks);
  }
}

namespace Private {
  export function task(task: TaskView): HTMLElement {
    const node = h('div', {
      className: 'loom-Task',
      loom: 'task',
      data: { taskId: task.task_id, status: task.status }
    });
    const done = task.subtasks.filter(s => s.status === 'passed').length;
    node.append(
      h('div', { className: 'loom-Task-goal', text: task.goal }),
      h('div', {
        className: 'loom-Task-meta',
        text: `${task.status} · ${done}/${task.subtasks.length} passed`
      }),
      ...task.subtasks.map(subtask)
    );
    return node;
  }

  export function subtask(item: SubtaskItem): HTMLElement {
    const detail = [
      item.attempt > 1 ? `attempt ${item.attempt}` : '',
      item.elapsed_s > 0 ? `${item.elapsed_s.toFixed(0)} s` : '',
      item.last_tool ?? ''
    ].filter(Boolean);
    return h(
      'div',
      { className: 'loom-Subtask', loom: 'subtask', data: { status: item.status, id: item.id } },
      h('span', { className: 'loom-Subtask-status', text: item.status }),
      h('span', { className: 'loom-Subtask-text', text: `${item.id}: ${item.description}` }),
      h('span', { className: 'loom-Subtask-detail', text: detail.join(' · ') })
    );
  }
}
